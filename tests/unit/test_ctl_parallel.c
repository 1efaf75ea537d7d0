/* A transaction drives its devices side by side: four sim switches are all
 * in their apply at once (each waits, with a deadline, at its first change
 * until every other has reached its own: one after another, the first
 * would wait alone and give up); one failing mid-way leaves every switch
 * where it started; the events come in device order; the plan's switching
 * time is the slowest switch's, not the sum. */
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/reconfig/internal.h"
#include "tests/unit/sim_world.h"

#define NSW 4

/* 16 hosts, port j of each on switch j: each switch holds one of the
 * topology's port permutations (16 cross-connects). */
static const char cfg_fmt[] =
    "name: par\n"
    "hosts: {count: 16, prefix: h, ports: 4}\n"
    "switches:\n"
    "  - {name: ocs0, type: ocs, ports: 16, reconfig_time: 10ms, driver: {type: sim}}\n"
    "  - {name: ocs1, type: ocs, ports: 16, reconfig_time: 10ms, driver: {type: sim}}\n"
    "  - {name: ocs2, type: ocs, ports: 16, reconfig_time: 10ms, driver: {type: sim}}\n"
    "  - {name: ocs3, type: ocs, ports: 16, reconfig_time: 30ms, driver: {type: sim}}\n"
    "wiring: {pattern: per-port, switches: [ocs0, ocs1, ocs2, ocs3]}\n"
    "topology: %s\n";

struct world {
	char dir[64];
	struct sim_device sim[NSW];
	struct fabric *torus;
	/* the barrier at each switch's first change */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint64_t first[NSW]; /* the command to wait at (0: none) */
	uint32_t arrived, gave_up;
	/* the devices of DEVICE_APPLIED events, in the order told */
	char applied[16][8];
	uint32_t napplied, rolled_back;
};

static struct world *the_world;

static struct sim_device *lookup(void *ctx, const char *name)
{
	struct world *w = ctx;

	for (uint32_t i = 0; i < NSW; i++) {
		char n[8];

		snprintf(n, sizeof(n), "ocs%u", i);
		if (strcmp(n, name) == 0)
			return &w->sim[i];
	}
	return NULL;
}

static void on_event(void *ctx, const struct ctl_event *ev)
{
	struct world *w = ctx;

	if (ev->kind == CTL_EV_DEVICE_APPLIED && w->napplied < 16)
		snprintf(w->applied[w->napplied++], sizeof(w->applied[0]), "%s", ev->device);
	if (ev->kind == CTL_EV_TXN_ROLLED_BACK)
		w->rolled_back++;
}

/* Wait until every switch reached its first change, for 20 s at most. */
static void barrier(void *ctx, uint64_t command)
{
	struct sim_device *s = ctx;
	struct world *w = the_world;
	uint32_t i = (uint32_t)(s - w->sim);
	struct timespec until;

	if (command != w->first[i])
		return;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 20;
	pthread_mutex_lock(&w->mu);
	w->arrived++;
	pthread_cond_broadcast(&w->cv);
	while (w->arrived < NSW)
		if (pthread_cond_timedwait(&w->cv, &w->mu, &until) != 0) {
			w->gave_up++;
			break;
		}
	pthread_mutex_unlock(&w->mu);
}

static struct fabric *load(const char *spec)
{
	return test_fabricf("par.yaml", cfg_fmt, spec);
}

static int setup(void **state)
{
	struct world *w = xcalloc(1, sizeof(*w));

	test_state_dir(w->dir, sizeof(w->dir), "par");
	for (uint32_t i = 0; i < NSW; i++)
		sim_device_init(&w->sim[i], DEV_SWITCH, 16);
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	w->torus = load("torus:4x4");
	the_world = w;
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	test_state_dir_remove(w->dir);
	for (uint32_t i = 0; i < NSW; i++)
		sim_device_free(&w->sim[i]);
	fabric_free(w->torus);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	free(w);
	return 0;
}

static struct ctl *open_planned(struct world *w, struct fabric *f)
{
	struct ctl_opts o = {
	    .state_dir = w->dir, .sim_lookup = lookup, .on_event = on_event, .ctx = w};
	struct ofc_error err = {0};
	struct ctl *c;

	assert_int_equal(ctl_open(f, &o, &c, &err), 0);
	assert_int_equal(c->ndevs, NSW);
	assert_int_equal(ctl_plan(c, &err), 0);
	return c;
}

/* Every switch waits at its first change for the others: they all get
 * there only when driven at once. */
static void test_side_by_side(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	struct ctl_result res;
	struct ctl *c = open_planned(w, w->torus);

	for (uint32_t i = 0; i < NSW; i++) {
		w->first[i] = w->sim[i].commands + 1;
		w->sim[i].before_command = barrier;
		w->sim[i].hook_ctx = &w->sim[i];
	}
	assert_int_equal(ctl_apply(c, 0, &res, &err), 0);
	assert_int_equal(w->arrived, NSW);
	assert_int_equal(w->gave_up, 0);
	assert_int_equal(res.ops_applied, NSW * 16);
	/* told in device order, whichever finished first */
	assert_int_equal(w->napplied, NSW);
	for (uint32_t i = 0; i < NSW; i++) {
		char n[8];

		snprintf(n, sizeof(n), "ocs%u", i);
		assert_string_equal(w->applied[i], n);
		assert_true(state_equal(&w->sim[i].state, &c->devs[i].target));
		w->sim[i].before_command = NULL;
	}
	ctl_close(c);
}

/* ocs2 refuses its fifth change: every switch, the three that reached
 * their targets too, is back where it started, verified. With ocs1 failing
 * as well, the error is ocs1's (the first in order), run after run. */
static void test_one_fails(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	struct ctl_result res;

	for (int two = 0; two < 2; two++) {
		struct device_state before[NSW];
		struct ctl *c = open_planned(w, w->torus);

		for (uint32_t i = 0; i < NSW; i++) {
			state_init(&before[i], DEV_SWITCH);
			state_copy(&before[i], &w->sim[i].state);
			w->sim[i].fail_at = 0;
			w->sim[i].mode = FAULT_DENY;
		}
		/* half-way through its 16 changes */
		w->sim[2].fail_at = w->sim[2].commands + 5;
		if (two)
			w->sim[1].fail_at = w->sim[1].commands + 9;
		w->napplied = w->rolled_back = 0;
		assert_int_equal(ctl_apply(c, 0, &res, &err), -1);
		assert_string_equal(res.failed_device, two ? "ocs1" : "ocs2");
		assert_non_null(strstr(err.msg, two ? "ocs1" : "ocs2"));
		assert_true(res.rolled_back);
		assert_true(res.rollback_ok);
		assert_int_equal(w->rolled_back, 1);
		/* the others were driven all the way (and then undone) */
		assert_int_equal(w->napplied, two ? NSW - 2 : NSW - 1);
		assert_string_equal(w->applied[0], "ocs0");
		for (uint32_t i = 0; i < NSW; i++) {
			assert_true(state_equal(&w->sim[i].state, &before[i]));
			state_free(&before[i]);
			w->sim[i].fail_at = 0;
		}
		ctl_close(c);
		struct ctl_record r;
		assert_int_equal(ctl_load_record(w->dir, "par", &r, &err), 0);
		assert_false(r.have_journal);
		ctl_record_free(&r);
	}
}

/* The switching time is the slowest switch's: ocs3 takes 30 ms a
 * reconfiguration against the others' 10 ms, 16 changes each at once. */
static void test_switching_time(void **state)
{
	struct world *w = *state;
	struct ctl *c = open_planned(w, w->torus);
	struct strbuf sb = STRBUF_INIT;
	char text[96];
	double sum = 0, slowest = 0;

	for (uint32_t i = 0; i < NSW; i++) {
		/* an OCS reconfigures once for its 16 changes */
		double t = c->devs[i].est_seconds;

		assert_int_equal(c->devs[i].plan.n, 16);
		assert_true(fabs(t - c->devs[i].op_seconds) < 1e-12);
		sum += t;
		slowest = t > slowest ? t : slowest;
	}
	assert_true(fabs(slowest - 0.030) < 1e-9);
	assert_true(fabs(ctl_plan_seconds(c) - slowest) < 1e-9);
	assert_true(ctl_plan_seconds(c) < sum);
	ctl_plan_seconds_text(c, text, sizeof(text));
	assert_string_equal(text, "switching time about 30 ms, the devices driven side by side");
	ctl_plan_text(c, &sb);
	assert_non_null(strstr(sb.buf, "(switching time about 30 ms, the devices driven side by "
				       "side)\n"));
	sb_free(&sb);
	ctl_close(c);

	/* One switch to change: its own time, and no word of side by side. */
	struct ofc_error err = {0};
	struct ctl_result res;
	c = open_planned(w, w->torus);
	assert_int_equal(ctl_apply(c, 0, &res, &err), 0);
	ctl_close(c);
	w->sim[1].state.nxc--; /* one cross-connect gone by hand */
	c = open_planned(w, w->torus);
	assert_int_equal(ctl_plan_size(c), 1);
	assert_true(fabs(ctl_plan_seconds(c) - 0.010) < 1e-9);
	ctl_plan_seconds_text(c, text, sizeof(text));
	assert_string_equal(text, "switching time about 10 ms");
	ctl_close(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_side_by_side, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_one_fails, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_switching_time, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
