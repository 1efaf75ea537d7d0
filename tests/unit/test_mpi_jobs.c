/* The jobs running ofcd's schedules (controller/ofcd/mpi_jobs.c), as a
 * drain's wait reads them: a job that said it took the config numbered
 * seq or a later one is done, one whose word came from asks before seq is
 * not; its word is the least of its taking asks (not its polls); a job off
 * the drained ports is not waited for; a caller that names no job, or
 * none at all, keeps the wait to its grace; a finalized job is not
 * waited for; a job that never asked is refused its word; bad names are
 * refused; callers past the table's bound keep the wait to its grace. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/ofcd/internal.h"

static struct ofcd *new_d(void)
{
	struct ofcd *d = xcalloc(1, sizeof(*d));

	pthread_mutex_init(&d->mjobs.mu, NULL);
	return d;
}

static void free_d(struct ofcd *d)
{
	pthread_mutex_destroy(&d->mjobs.mu);
	free(d->mjobs.v);
	free(d);
}

/* Partition "p1" is on the drained ports, "p2" is not. */
static bool on_p1(void *ctx, const char *part)
{
	(void)ctx;
	return strcmp(part, "p2") != 0;
}

static bool done(struct ofcd *d, uint64_t seq, struct strbuf *taken, struct strbuf *grace,
		 uint32_t n[2])
{
	return mpi_jobs_done(d, seq, on_p1, NULL, taken, grace, n);
}

static void test_word_after_the_publish(void **state)
{
	struct ofcd *d = new_d();
	struct strbuf t = STRBUF_INIT, g = STRBUF_INIT;
	uint32_t n[2];
	char why[200];

	(void)state;
	/* nobody: the grace */
	assert_false(done(d, 5, &t, &g, n));
	assert_int_equal(n[0] + n[1], 0);
	/* loaded on config 4, polled on 5: its word is 4's */
	mpi_jobs_asked(d, "p1", "h0/1", "uid:0", true, 4);
	mpi_jobs_asked(d, "p1", "h0/1", "uid:0", false, 5);
	assert_int_equal(mpi_jobs_taken(d, "p1", "h0/1", why, sizeof(why)), 0);
	assert_false(done(d, 5, &t, &g, n));
	assert_int_equal(n[1], 1);
	assert_string_equal(g.buf, "h0/1 (partition p1)");
	/* reloaded on 5 and 6 (published between two of its asks): 5 */
	mpi_jobs_asked(d, "p1", "h0/1", "uid:0", true, 6);
	mpi_jobs_asked(d, "p1", "h0/1", "uid:0", true, 5);
	assert_false(done(d, 5, &t, &g, n)); /* (not said yet) */
	assert_int_equal(mpi_jobs_taken(d, "p1", "h0/1", why, sizeof(why)), 0);
	assert_true(done(d, 5, &t, &g, n));
	assert_string_equal(t.buf, "h0/1 (partition p1)");
	assert_false(done(d, 6, &t, &g, n));
	/* a word without asks since changes nothing */
	assert_int_equal(mpi_jobs_taken(d, "p1", "h0/1", why, sizeof(why)), 0);
	assert_true(done(d, 5, &t, &g, n));
	/* a job off the ports is not waited for; the fabric's is */
	mpi_jobs_asked(d, "p2", "h3/9", "uid:0", true, 1);
	assert_true(done(d, 5, &t, &g, n));
	assert_int_equal(n[0] + n[1], 1);
	mpi_jobs_asked(d, NULL, "h2/7", "uid:0", true, 1);
	assert_false(done(d, 5, &t, &g, n));
	assert_string_equal(g.buf, "h2/7 (the fabric)");
	/* finalized: no longer waited for */
	mpi_jobs_ended(d, NULL, "h2/7");
	assert_true(done(d, 5, &t, &g, n));
	/* a caller naming no job keeps the wait to its grace */
	mpi_jobs_asked(d, "p1", NULL, "cn:ops", false, 9);
	assert_false(done(d, 5, &t, &g, n));
	assert_string_equal(g.buf, "cn:ops (partition p1)");
	sb_free(&t);
	sb_free(&g);
	free_d(d);
}

static void test_refused(void **state)
{
	struct ofcd *d = new_d();
	char why[200];

	(void)state;
	assert_int_equal(mpi_jobs_taken(d, "p1", "h0/1", why, sizeof(why)), -1);
	assert_string_equal(why,
			    "job h0/1 has not asked for partition p1's schedules here in the last "
			    "30 s");
	mpi_jobs_asked(d, "p1", "h0/1", "uid:0", true, 1);
	assert_int_equal(mpi_jobs_taken(d, "p2", "h0/1", why, sizeof(why)), -1);
	assert_true(mpi_job_name_ok("h0/4089"));
	assert_true(mpi_job_name_ok("slurm-job-7@n1:3"));
	assert_false(mpi_job_name_ok(""));
	assert_false(mpi_job_name_ok("a job"));
	assert_false(mpi_job_name_ok("x\"y"));
	assert_false(mpi_job_name_ok(
	    "0123456789012345678901234567890123456789012345678901234567890123456789"));
	free_d(d);
}

static void test_bounded(void **state)
{
	struct ofcd *d = new_d();
	struct strbuf t = STRBUF_INIT, g = STRBUF_INIT;
	uint32_t n[2];
	char name[32], why[200];

	(void)state;
	mpi_jobs_asked(d, "p1", "real/1", "uid:0", true, 3);
	assert_int_equal(mpi_jobs_taken(d, "p1", "real/1", why, sizeof(why)), 0);
	for (int i = 0; i < MPI_JOBS_MAX; i++) {
		snprintf(name, sizeof(name), "fake/%d", i);
		mpi_jobs_asked(d, "p2", name, "uid:1", false, 3);
	}
	assert_int_equal(d->mjobs.n, MPI_JOBS_MAX);
	/* the real job was pushed out: the drain waits its grace */
	assert_false(done(d, 3, &t, &g, n));
	assert_non_null(strstr(g.buf, "jobs past the 256 ofcd keeps track of"));
	sb_free(&t);
	sb_free(&g);
	free_d(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_word_after_the_publish),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
