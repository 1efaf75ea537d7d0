/* The outcomes of keyed mutations (controller/ofcd/outcomes.c): the table
 * keeps the newest OUTCOMES_MAX entries none older than
 * OUTCOMES_MAX_AGE_MS, a key belongs to its owner, a key put again is
 * the newest, and the store's encoding (ofc.v1.MutationOutcomes) gives
 * back every field, the recorded answer's bytes included. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/ofcd/conn.h"

#include <pthread.h>

static struct outcome *put_at(struct outcomes *t, const char *owner, unsigned i, uint64_t ms)
{
	char key[32];
	struct outcome *o;

	snprintf(key, sizeof(key), "k%u", i);
	o = outcomes_put(t, owner, key);
	o->ticket = i;
	o->time_ms = ms;
	return o;
}

static void test_bound_count(void **state)
{
	struct outcomes t = {0};
	uint64_t now = 1000000000;

	(void)state;
	for (unsigned i = 0; i < OUTCOMES_MAX + 44; i++)
		put_at(&t, "uid:0", i, now);
	assert_int_equal(t.n, OUTCOMES_MAX + 44);
	outcomes_trim(&t, now);
	assert_int_equal(t.n, OUTCOMES_MAX);
	/* the oldest left, the rest kept in their order */
	assert_null(outcomes_find(&t, "uid:0", "k43"));
	assert_non_null(outcomes_find(&t, "uid:0", "k44"));
	assert_string_equal(t.v[0].key, "k44");
	assert_string_equal(t.v[t.n - 1].key, "k299");
	outcomes_free(&t);
	assert_int_equal(t.n, 0);
}

static void test_bound_age(void **state)
{
	struct outcomes t = {0};
	uint64_t now = 1000000000;

	(void)state;
	put_at(&t, "uid:0", 1, now - OUTCOMES_MAX_AGE_MS - 1); /* just past it */
	put_at(&t, "uid:0", 2, now - OUTCOMES_MAX_AGE_MS);     /* just within */
	put_at(&t, "uid:0", 3, now);
	outcomes_trim(&t, now);
	assert_int_equal(t.n, 2);
	assert_null(outcomes_find(&t, "uid:0", "k1"));
	assert_non_null(outcomes_find(&t, "uid:0", "k2"));
	outcomes_free(&t);
}

static void test_owner_and_put_again(void **state)
{
	struct outcomes t = {0};

	(void)state;
	put_at(&t, "uid:0", 1, 5)->done = true;
	put_at(&t, "gateway:cn:alice", 1, 6);
	put_at(&t, "uid:0", 2, 7);
	/* the same key is another request of another owner */
	assert_int_equal(outcomes_find(&t, "uid:0", "k1")->time_ms, 5);
	assert_int_equal(outcomes_find(&t, "gateway:cn:alice", "k1")->time_ms, 6);
	assert_null(outcomes_find(&t, "uid:1000", "k1"));
	/* put again: one entry, fresh, the newest */
	put_at(&t, "uid:0", 1, 9);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.v[2].key, "k1");
	assert_string_equal(t.v[2].owner, "uid:0");
	assert_false(t.v[2].done);
	assert_int_equal(t.v[2].time_ms, 9);
	outcomes_free(&t);
}

static void test_encoding(void **state)
{
	struct outcomes t = {0}, back = {0};
	uint8_t answer[] = {0x10, 0x04, 0x1a, 0x02, 'n', 'o'}; /* FAILED, "no" */
	struct outcome *o;
	size_t len;
	uint8_t *buf;

	(void)state;
	o = outcomes_put(&t, "uid:1000", "0b7c-started");
	o->kind = xstrdup("reconfigure");
	o->target = xstrdup("torus:8x8");
	o->replica = xstrdup("r2");
	o->ticket = 8;
	o->epoch = 4711;
	o->gen_before = 6;
	o->time_ms = 1764000000000ull;
	o = outcomes_put(&t, "gateway:cn:admin", "done-1");
	o->done = true;
	o->ticket = 9;
	o->response = xmalloc(sizeof(answer));
	memcpy(o->response, answer, sizeof(answer));
	o->response_len = sizeof(answer);
	buf = outcomes_pack(&t, 4711, &len);
	assert_int_equal(outcomes_unpack(&back, buf, len), 0);
	assert_int_equal(back.n, 2);
	o = &back.v[0];
	assert_string_equal(o->key, "0b7c-started");
	assert_string_equal(o->owner, "uid:1000");
	assert_string_equal(o->kind, "reconfigure");
	assert_string_equal(o->target, "torus:8x8");
	assert_string_equal(o->replica, "r2");
	assert_int_equal(o->ticket, 8);
	assert_int_equal(o->epoch, 4711);
	assert_int_equal(o->gen_before, 6);
	assert_true(o->time_ms == 1764000000000ull);
	assert_false(o->done);
	assert_null(o->response);
	o = &back.v[1];
	assert_true(o->done);
	assert_null(o->kind);
	assert_int_equal(o->response_len, sizeof(answer));
	assert_memory_equal(o->response, answer, sizeof(answer));
	free(buf);
	/* the same bytes again from what was read */
	uint8_t *again = outcomes_pack(&back, 4711, &len);
	size_t len2;
	uint8_t *first = outcomes_pack(&t, 4711, &len2);
	assert_int_equal(len, len2);
	assert_memory_equal(again, first, len);
	free(again);
	free(first);
	/* bytes that are no MutationOutcomes: an error, the table emptied */
	uint8_t junk[] = {0xff, 0xff, 0xff};
	assert_int_equal(outcomes_unpack(&back, junk, sizeof(junk)), -1);
	assert_int_equal(back.n, 0);
	outcomes_free(&t);
	outcomes_free(&back);
}

static void test_key_syntax(void **state)
{
	char longest[OUTCOME_KEY_MAX + 2];

	(void)state;
	assert_true(outcome_key_ok("6f1c0e0a-55d2-4c7e-9b39-4b0f6c3c2a11"));
	assert_true(outcome_key_ok("slurm:job.42_prolog"));
	assert_false(outcome_key_ok(""));
	assert_false(outcome_key_ok("a b"));
	assert_false(outcome_key_ok("line\nbreak"));
	memset(longest, 'k', sizeof(longest));
	longest[OUTCOME_KEY_MAX] = 0;
	assert_true(outcome_key_ok(longest));
	longest[OUTCOME_KEY_MAX] = 'k';
	longest[OUTCOME_KEY_MAX + 1] = 0;
	assert_false(outcome_key_ok(longest));
}

/* A replica the store's view shows leading, whose loop has not yet taken
 * over (the note of its election on its way), starts nothing from its
 * queue: a release run then answered from the state it followed ("not
 * held" for a hold it had not seen). Once it has taken over, it does. */
static void test_no_start_before_takeover(void **state)
{
	struct ofcd *d = xcalloc(1, sizeof(*d));
	struct job *j = xcalloc(1, sizeof(*j));

	(void)state;
	d->loop = xcalloc(1, sizeof(*d->loop));
	pthread_mutex_init(&d->jobs.mu, NULL);
	pthread_cond_init(&d->jobs.cond, NULL);
	d->clustered = true;
	j->kind = JOB_RELEASE;
	queue_append(d, j);
	d->loop->cl.leading = d->loop->cl.fresh = true;
	ofcd_maybe_start(d);
	assert_null(d->loop->running);
	assert_ptr_equal(d->loop->queue, j);
	d->loop->leading = true; /* (the takeover done) */
	ofcd_maybe_start(d);
	assert_ptr_equal(d->loop->running, j);
	assert_null(d->loop->queue);
	job_free(j);
	pthread_cond_destroy(&d->jobs.cond);
	pthread_mutex_destroy(&d->jobs.mu);
	free(d->loop);
	free(d);
}

/* A takeover that did not finish is asked for again, 1 s later, then 2 s
 * after a second failure, while the store says this replica leads; not
 * once it leads no more. */
static void test_takeover_retried(void **state)
{
	struct ofcd *d = xcalloc(1, sizeof(*d));

	(void)state;
	d->loop = xcalloc(1, sizeof(*d->loop));
	d->clustered = true;
	d->loop->cl.leading = true;
	cluster_takeover_failed(d, 100.0);
	assert_false(cluster_takeover_retry(d, 100.9));
	assert_null(d->loop->cluster_job);
	assert_true(cluster_takeover_retry(d, 101.0));
	assert_non_null(d->loop->cluster_job);
	assert_int_equal(d->loop->cluster_job->kind, JOB_TAKEOVER);
	assert_false(cluster_takeover_retry(d, 200.0)); /* asked once */
	job_free(d->loop->cluster_job);
	d->loop->cluster_job = NULL;
	cluster_takeover_failed(d, 110.0); /* it failed again: twice the wait */
	assert_false(cluster_takeover_retry(d, 111.5));
	d->loop->cl.leading = false; /* deposed meanwhile: nothing to take over */
	assert_false(cluster_takeover_retry(d, 112.0));
	assert_null(d->loop->cluster_job);
	for (int i = 0; i < 10; i++)
		cluster_takeover_failed(d, 0);
	assert_true(d->loop->takeover_retry_at <= 30.0);
	free(d->loop);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bound_count),
	    cmocka_unit_test(test_bound_age),
	    cmocka_unit_test(test_owner_and_put_again),
	    cmocka_unit_test(test_encoding),
	    cmocka_unit_test(test_key_syntax),
	    cmocka_unit_test(test_no_start_before_takeover),
	    cmocka_unit_test(test_takeover_retried),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
