/* The testbed's schedules through ofcd are computed in a planner process
 * (controller/ofcd/testbed_schedules.c, planner_testbed.c), not in ofcd:
 * on a daemon over a sim switch, what its source answers is what `ofc
 * testbed` computes in its own process (schedule_here), byte for byte
 * (libofc-mpi's files) and transfer for transfer (a run's schedule), on
 * the config's topology and on another committed on its hosts; and a
 * planner of role testbed that dies costs that schedule, its reason
 * named, while the daemon goes on answering. */
#include "tests/unit/ofcd_world.h"

#include "controller/ofcd/testbed.h"
#include "controller/testbed/testbed.h"

#include <sys/stat.h>

/* The daemon's planner source for f (spec on its hosts, or NULL). */
static struct testbed_planner planner_for(struct world *w, const struct fabric *f, const char *spec)
{
	return (struct testbed_planner){.d = w->d, .cfg = w->d->w->cfg, .f = f, .spec = spec};
}

static void same_got(const struct schedule_got *a, const struct schedule_got *b,
		     enum schedule_got_what what)
{
	assert_int_equal(a->have, b->have);
	assert_int_equal(a->verified, b->verified);
	assert_string_equal(a->why, b->why);
	assert_string_equal(a->verify_error, b->verify_error);
	assert_int_equal(a->napplies, b->napplies);
	for (uint32_t i = 0; i < a->napplies; i++)
		assert_string_equal(a->applies[i], b->applies[i]);
	if (!a->have)
		return;
	if (what == SCHEDULE_GOT_PB) {
		assert_true(a->pb_len > 0);
		assert_int_equal(a->pb_len, b->pb_len);
		assert_memory_equal(a->pb, b->pb, a->pb_len);
		return;
	}
	assert_int_equal(a->s.collective, b->s.collective);
	assert_int_equal(a->s.nodes, b->s.nodes);
	assert_int_equal(a->s.nsteps, b->s.nsteps);
	assert_int_equal(a->s.nxfers, b->s.nxfers);
	assert_true(a->s.nxfers > 0);
	assert_memory_equal(a->s.step_start, b->s.step_start,
			    ((size_t)a->s.nsteps + 1) * sizeof(uint32_t));
	assert_memory_equal(a->s.xfers, b->s.xfers, a->s.nxfers * sizeof(struct xfer));
}

/* q asked of both sources: the same answer. */
static void same_answer(const struct schedule_source *ofcd, struct schedule_query q,
			enum schedule_got_what what)
{
	struct schedule_got here, there;
	struct ofc_error e1 = {0}, e2 = {0};

	assert_int_equal(schedule_here.compute(NULL, &q, what, &here, &e1), 0);
	assert_int_equal(ofcd->compute(ofcd->ctx, &q, what, &there, &e2), 0);
	same_got(&here, &there, what);
	schedule_got_free(&here);
	schedule_got_free(&there);
}

static void test_same_as_here(void **state)
{
	struct world *w = *state;
	const enum sched_collective kinds[] = {SCHED_ALLREDUCE, SCHED_ALLGATHER,
					       SCHED_REDUCE_SCATTER, SCHED_ALLTOALL};
	struct ofc_error err = {0};
	struct testbed_topo other;

	start(w, 30, 0);
	const struct fabric *f = w->d->w->ctl->fabric;
	struct testbed_planner tp = planner_for(w, f, NULL);
	struct schedule_source src = testbed_planner_source(&tp);

	/* libofc-mpi's files: the default algorithm of each collective */
	for (size_t i = 0; i < 4; i++)
		same_answer(
		    &src,
		    (struct schedule_query){.fabric = f, .collective = kinds[i], .size = 1 << 20},
		    SCHEDULE_GOT_PB);
	/* a run's: named, priced at the testbed's model, within a time limit */
	struct ofc_clock clk = {.start = now_seconds(), .limit = 600};
	clk.deadline = clk.start + clk.limit;
	struct schedule_query run = {.fabric = f,
				     .collective = SCHED_ALLREDUCE,
				     .algorithm = "ring",
				     .size = 4 << 20,
				     .alpha = 2e-4,
				     .alpha_set = true,
				     .bandwidth = 80e6,
				     .bandwidth_set = true,
				     .clock = &clk};
	same_answer(&src, run, SCHEDULE_GOT_STEPS);
	/* one that does not apply: its reason */
	run.algorithm = "recursive";
	same_answer(&src, run, SCHEDULE_GOT_STEPS);
	/* "all": the algorithms that apply, in the comparison's order */
	run.algorithm = "all";
	run.no_certify = true;
	same_answer(&src, run, SCHEDULE_GOT_STEPS);

	/* another topology committed on the same hosts */
	assert_int_equal(testbed_topo_open(f, "circulant:64:1,8", &other, &err), 0);
	tp = planner_for(w, &other.f, other.spec);
	src = testbed_planner_source(&tp);
	run.fabric = &other.f;
	run.algorithm = "bfb";
	run.no_certify = false;
	same_answer(&src, run, SCHEDULE_GOT_STEPS);
	same_answer(&src,
		    (struct schedule_query){
			.fabric = &other.f, .collective = SCHED_ALLGATHER, .size = 1 << 20},
		    SCHEDULE_GOT_PB);
	/* a query on a fabric that is not the source's is refused */
	run.fabric = f;
	struct schedule_got g;
	assert_int_equal(src.compute(src.ctx, &run, SCHEDULE_GOT_STEPS, &g, &err), -1);
	assert_non_null(strstr(err.msg, "another fabric"));
	testbed_topo_free(&other);
}

/* The testbed's planner dies before it answers: a second one, then the
 * refusal naming how both ended; the daemon answers on. */
static void test_planner_dies(void **state)
{
	struct world *w = *state;
	char dying[4200], starts[4200], cases[4400];
	struct ofc_error err = {0};
	struct ofcd_client c;
	struct schedule_got g;
	struct stat st;
	Ofc__V1__Response *r;

	snprintf(starts, sizeof(starts), "%s/dying.starts", w->dir);
	snprintf(cases, sizeof(cases), "*\" --for testbed \"*) echo x >>'%s'; kill -9 $$ ;;",
		 starts);
	write_dying_planner(w, cases, dying, sizeof(dying));
	w->planner_of_next = dying;
	start(w, 30, 0);
	w->planner_of_next = NULL;
	const struct fabric *f = w->d->w->ctl->fabric;
	struct testbed_planner tp = planner_for(w, f, NULL);
	struct schedule_source src = testbed_planner_source(&tp);
	struct schedule_query q = {
	    .fabric = f, .collective = SCHED_ALLREDUCE, .algorithm = "ring", .size = 1 << 20};

	assert_int_equal(src.compute(src.ctx, &q, SCHEDULE_GOT_STEPS, &g, &err), -1);
	assert_non_null(strstr(err.msg, "the planner process computing it was killed by SIGKILL"));
	assert_non_null(strstr(err.msg, "(the one before it was killed by SIGKILL"));
	assert_int_equal(stat(starts, &st), 0);
	/* two asks, "x\n" a start; a planner that died before the job was
	 * written costs a start more (planner_send_frame), so 2 to 4 */
	assert_true(st.st_size >= 4 && st.st_size <= 8);
	connect_ok(w, &c);
	r = get_state(&c, 1);
	assert_non_null(r);
	assert_int_equal(r->status, OFC__V1__STATUS__STATUS_OK);
	ofc__v1__response__free_unpacked(r, NULL);
	ofcd_disconnect(&c);
}

int main(int argc, char **argv)
{
	char *copy = xstrdup(argv[0]);

	(void)argc;
	snprintf(build_dir, sizeof(build_dir), "%s/..", dirname(copy));
	free(copy);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_same_as_here, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_planner_dies, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
