/* What the unit tests over sim devices share: a state directory made for
 * the test and removed after it (on tmpfs when there is one: transactions
 * fsync many small files), and a fabric parsed and validated from YAML text
 * (a bad config fails the test with the loader's FILE:LINE:COL message).
 * Included by test_ctl.c, test_ctl_parallel.c, test_reconfigure.c,
 * test_journal.c and the relabel tests; static inline, so each uses what it
 * needs. */
#ifndef OFC_TESTS_UNIT_SIM_WORLD_H
#define OFC_TESTS_UNIT_SIM_WORLD_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config.h"

/* dir (n bytes) becomes a new directory named for tag. */
static inline void test_state_dir(char *dir, size_t n, const char *tag)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

	assert_true((size_t)snprintf(dir, n, "%s/ofc-%s.XXXXXX", base, tag) < n);
	assert_non_null(mkdtemp(dir));
}

static inline void test_state_dir_remove(const char *dir)
{
	char *cmd = xasprintf("rm -rf '%s'", dir);

	assert_int_equal(system(cmd), 0);
	free(cmd);
}

/* The fabric text describes, as file would be read; validated. */
static inline struct fabric *test_fabric(const char *file, const char *text)
{
	struct fabric *f;
	struct ofc_error err = {0};

	if (config_parse(file, text, strlen(text), &f, &err) < 0 || fabric_validate(f, &err) < 0)
		fail_msg("%s", err.msg);
	return f;
}

/* The same, with fmt's one %s filled in by arg (a topology, say). */
static inline struct fabric *test_fabricf(const char *file, const char *fmt, const char *arg)
{
	char *text = xasprintf(fmt, arg);
	struct fabric *f = test_fabric(file, text);

	free(text);
	return f;
}

#endif
