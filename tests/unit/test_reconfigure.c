/* reconfigure_run, the use case every front door calls, over a sim OCS:
 * a dry run stops at the plan and changes nothing; --max-moves and the
 * caller's check refuse at RECONF_CHECK with the device untouched; an
 * apply commits, and again changes nothing (skip_empty: no transaction);
 * a partition by name is aimed at alone, an unknown one is a usage error
 * at RECONF_AIM; a target callback's ctl is the one planned; the last
 * commit's renumbering is kept and told; free_ports aims every port but a
 * kept partition's, whose cross-connects stay as read, and refuses what
 * would take a port a kept cross-connect holds; a renumbering is the
 * caller's table's (ofcd's asks a planner process), refused without one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/reconfig/reconfig.h"
#include "tests/unit/sim_world.h"

static const char cfg_fmt[] = "name: parts\n"
			      "hosts: {count: 8, prefix: h, ports: 2}\n"
			      "switches:\n"
			      "  - {name: ocs0, type: ocs, ports: 16, driver: {type: sim}}\n"
			      "wiring: {pattern: sequential, switches: [ocs0]}\n"
			      "topology: %s\n"
			      "partitions:\n"
			      "  - {name: jobA, hosts: [h0, h1, h2, h3], topology: 'biring:4'}\n";

struct world {
	char dir[64];
	struct sim_device sim;
	struct fabric *circ, *biring;
	uint32_t kept, aimed; /* events told */
	struct ctl *other;    /* what target() gives */
	bool refuse;	      /* check() refuses */
	uint32_t checked;     /* ... the plan's size it saw */
	uint32_t planned_ops; /* the plan's size at the end of a run */
	uint32_t renumbered;  /* counted_ops' partition renumberings */
};

static struct sim_device *lookup(void *ctx, const char *name)
{
	struct world *w = ctx;

	return strcmp(name, "ocs0") == 0 ? &w->sim : NULL;
}

static struct fabric *load(const char *spec)
{
	return test_fabricf("parts.yaml", cfg_fmt, spec);
}

static int setup(void **state)
{
	struct world *w = xcalloc(1, sizeof(*w));

	test_state_dir(w->dir, sizeof(w->dir), "reconf");
	sim_device_init(&w->sim, DEV_SWITCH, 16);
	w->circ = load("circulant:8:3");
	w->biring = load("biring:8");
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	test_state_dir_remove(w->dir);
	sim_device_free(&w->sim);
	fabric_free(w->circ);
	fabric_free(w->biring);
	free(w);
	return 0;
}

static struct ctl *open_ctl(struct world *w, struct fabric *f)
{
	struct ctl_opts o = {.state_dir = w->dir, .sim_lookup = lookup, .ctx = w};
	struct ofc_error err = {0};
	struct ctl *c;

	assert_int_equal(ctl_open(f, &o, &c, &err), 0);
	return c;
}

static void on_event(void *ctx, enum reconfigure_event ev, const struct reconfigure_result *r)
{
	struct world *w = ctx;

	(void)r;
	if (ev == RECONF_EV_KEEP_NUMBERING)
		w->kept++;
	else if (ev == RECONF_EV_AIMED)
		w->aimed++;
}

static int target(void *ctx, struct ctl **out, struct ofc_error *err)
{
	struct world *w = ctx;

	(void)err;
	*out = w->other;
	return 0;
}

static int check(void *ctx, struct ctl *planned, struct ofc_error *err)
{
	struct world *w = ctx;

	w->checked = ctl_plan_size(planned);
	return w->refuse ? ofc_error_set(err, OFC_E_RUNTIME, "held elsewhere") : 0;
}

/* One run of the use case on a fresh ctl of f. */
static int run(struct world *w, struct fabric *f, struct reconfigure_req *q,
	       struct reconfigure_result *r, struct ofc_error *err)
{
	struct ctl *c = open_ctl(w, f);
	int rc;

	q->ctl = c;
	q->lock = q->recover = true;
	q->on_event = on_event;
	q->ctx = w;
	rc = reconfigure_run(q, r, err);
	w->planned_ops = r->planned ? ctl_plan_size(r->planned) : 0;
	if (r->planned != c)
		ctl_close(r->planned);
	ctl_close(c);
	return rc;
}

static void test_dry_run_changes_nothing(void **state)
{
	struct world *w = *state;
	struct reconfigure_req q = {.dry_run = true};
	struct reconfigure_result r;
	struct ofc_error err = {0};

	assert_int_equal(run(w, w->circ, &q, &r, &err), 0);
	assert_int_equal(r.stage, RECONF_DONE);
	assert_false(r.applied);
	assert_int_equal(w->aimed, 1);
	assert_int_equal(w->sim.state.nxc, 0);
	reconfigure_result_free(&r);
}

static void test_checks_refuse_untouched(void **state)
{
	struct world *w = *state;
	struct reconfigure_req q = {.max_moves = 3, .max_moves_set = true};
	struct reconfigure_result r;
	struct ofc_error err = {0};

	assert_int_equal(run(w, w->circ, &q, &r, &err), -1);
	assert_int_equal(r.stage, RECONF_CHECK);
	assert_non_null(strstr(err.msg, "16 operations"));
	assert_non_null(strstr(err.msg, "more than --max-moves 3"));
	assert_false(r.applied);
	assert_int_equal(w->sim.state.nxc, 0);
	reconfigure_result_free(&r);

	struct reconfigure_req q2 = {.check = check};
	w->refuse = true;
	ofc_error_clear(&err);
	assert_int_equal(run(w, w->circ, &q2, &r, &err), -1);
	assert_int_equal(r.stage, RECONF_CHECK);
	assert_int_equal(w->checked, 16);
	assert_string_equal(err.msg, "held elsewhere");
	assert_int_equal(w->sim.state.nxc, 0);
	reconfigure_result_free(&r);
}

static void test_apply_then_nothing(void **state)
{
	struct world *w = *state;
	struct reconfigure_req q = {0};
	struct reconfigure_result r;
	struct ofc_error err = {0};

	assert_int_equal(run(w, w->circ, &q, &r, &err), 0);
	assert_int_equal(r.stage, RECONF_DONE);
	assert_true(r.applied);
	assert_int_equal(r.txn.ops_applied, 16);
	assert_int_equal(w->sim.state.nxc, 16);
	reconfigure_result_free(&r);

	struct reconfigure_req again = {.skip_empty = true};
	assert_int_equal(run(w, w->circ, &again, &r, &err), 0);
	assert_int_equal(r.stage, RECONF_DONE);
	assert_false(r.applied);
	reconfigure_result_free(&r);
}

static void test_partition_by_name(void **state)
{
	struct world *w = *state;
	struct reconfigure_req q = {.partition_name = "jobA", .dry_run = true};
	struct reconfigure_result r;
	struct ofc_error err = {0};

	assert_int_equal(run(w, w->circ, &q, &r, &err), 0);
	assert_non_null(r.partition);
	assert_string_equal(r.partition->name, "jobA");
	reconfigure_result_free(&r);

	struct reconfigure_req nope = {.partition_name = "nope", .dry_run = true};
	assert_int_equal(run(w, w->circ, &nope, &r, &err), -1);
	assert_int_equal(r.stage, RECONF_AIM);
	assert_int_equal(err.code, OFC_E_USAGE);
	assert_non_null(strstr(err.msg, "has the partitions 'jobA'"));
	reconfigure_result_free(&r);
}

static void test_target_planned(void **state)
{
	struct world *w = *state;
	struct reconfigure_req q = {.target = target, .dry_run = true};
	struct reconfigure_result r;
	struct ofc_error err = {0};

	w->other = open_ctl(w, w->biring);
	assert_int_equal(run(w, w->circ, &q, &r, &err), 0);
	assert_ptr_equal(r.planned, w->other); /* (closed by run) */
	assert_int_equal(w->planned_ops, 16);
	reconfigure_result_free(&r);
}

static void test_keeps_numbering(void **state)
{
	struct world *w = *state;
	struct reconfigure_req q = {0};
	struct reconfigure_result r;
	struct ofc_error err = {0};

	assert_int_equal(run(w, w->circ, &q, &r, &err), 0);
	reconfigure_result_free(&r);
	/* biring:8 renumbered onto the circulant's circuits */
	struct reconfigure_req relabel = {
	    .relabel = true, .relabel_opts = {.budget_s = 1}, .relabel_ops = &relabel_direct};
	assert_int_equal(run(w, w->biring, &relabel, &r, &err), 0);
	assert_true(r.renumbered);
	assert_int_equal(r.txn.ops_applied, 0);
	reconfigure_result_free(&r);
	/* a plain plan keeps that numbering, and says so */
	struct reconfigure_req plain = {
	    .keep_numbering = true, .dry_run = true, .relabel_ops = &relabel_direct};
	w->kept = 0;
	assert_int_equal(run(w, w->biring, &plain, &r, &err), 0);
	assert_int_equal(w->kept, 1);
	assert_true(r.kept_numbering);
	assert_int_equal(r.kept_generation, 2);
	assert_int_equal(w->planned_ops, 0);
	reconfigure_result_free(&r);
}

/* A caller's partition renumbering: relabel_direct's, counted (ctx: the
 * run's, the world). */
static int counted_partition(void *ctx, const struct fabric *f, const struct partition *p,
			     const struct device_state *const *actual, const struct relabel_opts *o,
			     struct circuit **out, uint32_t *nout, struct fabric_relabel *rep,
			     struct ofc_error *err)
{
	struct world *w = ctx;

	w->renumbered++;
	return relabel_direct.partition(NULL, f, p, actual, o, out, nout, rep, err);
}

static const struct relabel_ops counted_ops = {.partition = counted_partition};

/* The use case renumbers through the caller's table, never on its own: a
 * partition's by the table's partition (with the run's ctx), the same plan
 * as relabel_direct's; a renumbering the table has not (here the whole
 * fabric's), or with no table, is refused at RECONF_AIM, nothing applied. */
static void test_renumbering_is_the_callers(void **state)
{
	struct world *w = *state;
	struct reconfigure_result r;
	struct ofc_error err = {0};

	/* jobA's biring:4 renumbered onto the empty switch */
	struct reconfigure_req direct = {.partition_name = "jobA",
					 .relabel = true,
					 .relabel_opts = {.budget_s = 1, .seed = 1},
					 .relabel_ops = &relabel_direct,
					 .dry_run = true};
	assert_int_equal(run(w, w->circ, &direct, &r, &err), 0);
	uint32_t want = w->planned_ops;
	assert_int_equal(want, 8);
	struct fabric_relabel want_rep = r.relabel;
	reconfigure_result_free(&r);
	struct reconfigure_req counted = direct;
	counted.relabel_ops = &counted_ops;
	assert_int_equal(run(w, w->circ, &counted, &r, &err), 0);
	assert_int_equal(w->renumbered, 1);
	assert_int_equal(w->planned_ops, want);
	assert_int_equal(r.relabel.kept, want_rep.kept);
	assert_int_equal(r.relabel.arcs, want_rep.arcs);
	assert_true(r.renumbered);
	reconfigure_result_free(&r);

	struct reconfigure_req whole = {
	    .relabel = true, .relabel_opts = {.budget_s = 1}, .relabel_ops = &counted_ops};
	assert_int_equal(run(w, w->circ, &whole, &r, &err), -1);
	assert_int_equal(r.stage, RECONF_AIM);
	assert_false(r.applied);
	assert_string_equal(err.msg, "fabric parts: renumbering the whole fabric is not done by "
				     "this program (no search given to reconfigure_run)");
	reconfigure_result_free(&r);
	struct reconfigure_req none = direct;
	none.relabel_ops = NULL;
	err = (struct ofc_error){0};
	assert_int_equal(run(w, w->circ, &none, &r, &err), -1);
	assert_int_equal(r.stage, RECONF_AIM);
	assert_non_null(strstr(err.msg, "renumbering a partition is not done by this program"));
	reconfigure_result_free(&r);
	assert_int_equal(w->renumbered, 1);
}

/* Switch ports 1..8 are jobA's (h0..h3, 2 ports each, sequential). */
static bool jobs_port(uint32_t p)
{
	return p >= 1 && p <= 8;
}

static bool holds(const struct device_state *s, struct xconn x)
{
	for (uint32_t k = 0; k < s->nxc; k++)
		if (s->xc[k].in == x.in && s->xc[k].out == x.out)
			return true;
	return false;
}

static void test_free_ports(void **state)
{
	struct world *w = *state;
	const struct partition *keep[] = {&w->circ->partitions[0]}; /* jobA */
	struct reconfigure_result r;
	struct ofc_error err = {0};

	/* jobA at its own topology: its circuits among its ports alone */
	struct reconfigure_req part = {.partition_name = "jobA"};
	assert_int_equal(run(w, w->circ, &part, &r, &err), 0);
	reconfigure_result_free(&r);
	struct device_state before;
	state_init(&before, DEV_SWITCH);
	state_copy(&before, &w->sim.state);
	assert_int_equal(before.nxc, 8);

	/* the fabric's circulant on the other ports: jobA's 8 kept as read */
	struct reconfigure_req q = {.free_ports = true, .keep = keep, .nkeep = 1};
	assert_int_equal(run(w, w->circ, &q, &r, &err), 0);
	assert_true(r.applied);
	assert_int_equal(r.kept_circuits, 8);
	reconfigure_result_free(&r);
	struct ctl *c = open_ctl(w, w->circ);
	struct device_state want;
	uint32_t free_arcs = 0;
	ctl_fabric_target(c, 0, &want);
	for (uint32_t k = 0; k < before.nxc; k++)
		assert_true(holds(&w->sim.state, before.xc[k]));
	for (uint32_t k = 0; k < want.nxc; k++)
		if (!jobs_port(want.xc[k].in) && !jobs_port(want.xc[k].out)) {
			assert_true(holds(&w->sim.state, want.xc[k]));
			free_arcs++;
		}
	assert_true(free_arcs > 0);
	assert_int_equal(w->sim.state.nxc, before.nxc + free_arcs);
	state_free(&want);
	ctl_close(c);

	/* not with a partition */
	struct reconfigure_req both = {
	    .free_ports = true, .keep = keep, .nkeep = 1, .partition_name = "jobA"};
	assert_int_equal(run(w, w->circ, &both, &r, &err), -1);
	assert_int_equal(r.stage, RECONF_AIM);
	assert_int_equal(err.code, OFC_E_USAGE);
	reconfigure_result_free(&r);

	/* nothing kept: the whole fabric's plan, as a plain one */
	struct reconfigure_req none = {.free_ports = true, .dry_run = true};
	assert_int_equal(run(w, w->biring, &none, &r, &err), 0);
	uint32_t none_ops = w->planned_ops;
	reconfigure_result_free(&r);
	struct reconfigure_req plain = {.dry_run = true};
	assert_int_equal(run(w, w->biring, &plain, &r, &err), 0);
	assert_int_equal(w->planned_ops, none_ops);
	reconfigure_result_free(&r);

	/* the whole circulant: jobA's hosts joined to the others; biring:8
	 * on the free ports needs ports those kept cross-connects hold */
	struct reconfigure_req whole = {0};
	assert_int_equal(run(w, w->circ, &whole, &r, &err), 0);
	reconfigure_result_free(&r);
	state_copy(&before, &w->sim.state);
	struct reconfigure_req over = {.free_ports = true, .keep = keep, .nkeep = 1};
	assert_int_equal(run(w, w->biring, &over, &r, &err), -1);
	assert_int_equal(r.stage, RECONF_AIM);
	assert_non_null(strstr(err.msg, "joins a port of partition 'jobA' to a free port the "
					"target needs"));
	assert_non_null(strstr(err.msg, "nothing was planned"));
	assert_int_equal(w->planned_ops, 0);
	assert_true(state_equal(&before, &w->sim.state));
	reconfigure_result_free(&r);
	state_free(&before);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_dry_run_changes_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_checks_refuse_untouched, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_apply_then_nothing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_partition_by_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_target_planned, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_keeps_numbering, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_renumbering_is_the_callers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_free_ports, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
