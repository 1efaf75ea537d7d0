/* The transaction engine over sim devices: every command of an apply
 * failing in every fault mode leaves the device as it was (or at the
 * target, when the apply stands); a device that dies mid-apply leaves a
 * journal that recovery finishes or undoes; trials revert unless confirmed;
 * one changer at a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/reconfig/internal.h"
#include "controller/schedule/schedule.h"
#include "tests/unit/crashpoint.h"
#include "tests/unit/sim_world.h"

static const char cfg_fmt[] = "name: simfab\n"
			      "hosts: {count: 64, prefix: h, ports: 4}\n"
			      "switches:\n"
			      "  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}\n"
			      "wiring: {pattern: sequential, switches: [ocs0]}\n"
			      "topology: %s\n";

struct world {
	char dir[64];
	struct sim_device sim;
	struct fabric *torus, *circ;
	uint32_t events[16];
};

static struct sim_device *lookup(void *ctx, const char *name)
{
	struct world *w = ctx;

	return strcmp(name, "ocs0") == 0 ? &w->sim : NULL;
}

static void on_event(void *ctx, const struct ctl_event *ev)
{
	struct world *w = ctx;

	w->events[ev->kind]++;
}

static struct fabric *load(const char *spec)
{
	return test_fabricf("sim.yaml", cfg_fmt, spec);
}

static int setup(void **state)
{
	struct world *w = xcalloc(1, sizeof(*w));

	test_state_dir(w->dir, sizeof(w->dir), "ctl");
	sim_device_init(&w->sim, DEV_SWITCH, 256);
	w->torus = load("torus:8x8");
	w->circ = load("circulant:64:3,8");
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	test_state_dir_remove(w->dir);
	sim_device_free(&w->sim);
	fabric_free(w->torus);
	fabric_free(w->circ);
	free(w);
	return 0;
}

static struct ctl *open_ctl(struct world *w, struct fabric *f)
{
	struct ctl_opts o = {
	    .state_dir = w->dir, .sim_lookup = lookup, .on_event = on_event, .ctx = w};
	struct ofc_error err = {0};
	struct ctl *c;

	assert_int_equal(ctl_open(f, &o, &c, &err), 0);
	assert_int_equal(c->ndevs, 1);
	return c;
}

/* Plan and apply f on the sim device as it is. */
static int apply(struct world *w, struct fabric *f, double deadline, struct ctl_result *res,
		 struct ofc_error *err)
{
	struct ctl *c = open_ctl(w, f);
	int rc = ctl_plan(c, err);

	if (rc == 0)
		rc = ctl_apply(c, deadline, res, err);
	ctl_close(c);
	return rc;
}

static void target_of(struct world *w, struct fabric *f, struct device_state *out)
{
	struct ctl *c = open_ctl(w, f);

	state_init(out, DEV_SWITCH);
	state_copy(out, &c->devs[0].target);
	ctl_close(c);
}

static void reset(struct world *w, const struct device_state *s)
{
	state_copy(&w->sim.state, s);
	w->sim.commands = 0;
	w->sim.fail_at = 0;
	w->sim.fail_count = 1;
	w->sim.lie_armed = false;
}

static bool journal_exists(struct world *w)
{
	char *p = xasprintf("%s/simfab.journal", w->dir);
	bool yes = access(p, F_OK) == 0;

	free(p);
	return yes;
}

static void test_fault_sweep(void **state)
{
	struct world *w = *state;
	struct device_state pre, tgt;
	struct ctl_result res;
	struct ofc_error err = {0};
	uint64_t m;
	(void)state;

	target_of(w, w->circ, &pre);
	target_of(w, w->torus, &tgt);
	reset(w, &pre);
	assert_int_equal(apply(w, w->torus, 0, &res, &err), 0);
	assert_true(state_equal(&w->sim.state, &tgt));
	m = w->sim.commands; /* open, read, changes, read-back */
	assert_int_equal(m, 3 + res.ops_applied);
	assert_int_equal(res.ops_applied, 256);

	for (enum fault_mode mode = FAULT_DENY; mode <= FAULT_LIE; mode++) {
		uint32_t failed = 0;

		for (uint64_t k = 1; k <= m; k++) {
			reset(w, &pre);
			w->sim.fail_at = k;
			w->sim.mode = mode;
			int rc = apply(w, w->torus, 0, &res, &err);

			assert_int_equal(rc, -1);
			failed++;
			assert_true(state_equal(&w->sim.state, &pre));
			assert_false(journal_exists(w));
			if (k > 2)
				assert_true(res.rolled_back && res.rollback_ok);
		}
		/* Every mode fails at every command. The sim's lie (on the
		 * next read) moves a cross-connect to the next egress, which on
		 * this full switch names an egress twice: an impossible state,
		 * refused even when it is the plan's read (which used to go on
		 * with a skewed plan). */
		assert_int_equal(failed, m);
	}
	state_free(&pre);
	state_free(&tgt);
}

static void test_recovery(void **state)
{
	struct world *w = *state;
	struct device_state pre, tgt;
	struct ctl_result res;
	struct ofc_error err = {0};
	struct ctl_record rec;
	bool did;

	target_of(w, w->circ, &pre);
	target_of(w, w->torus, &tgt);

	/* The device dies half-way: the rollback cannot reach it either. */
	reset(w, &pre);
	w->sim.fail_at = 100;
	w->sim.fail_count = 1u << 30;
	w->sim.mode = FAULT_CLOSE;
	assert_int_equal(apply(w, w->torus, 0, &res, &err), -1);
	assert_true(res.rolled_back);
	assert_false(res.rollback_ok);
	assert_true(journal_exists(w));
	assert_int_equal(ctl_load_record(w->dir, "simfab", &rec, &err), 0);
	assert_true(rec.have_journal);
	assert_string_equal(rec.journal_phase, "rolling-back");
	ctl_record_free(&rec);
	/* It comes back; the next changer undoes the half-applied change. */
	w->sim.fail_at = 0;
	struct ctl *c = open_ctl(w, w->torus);
	assert_int_equal(ctl_recover(c, &did, &err), 0);
	assert_true(did);
	ctl_close(c);
	assert_false(journal_exists(w));
	assert_true(state_equal(&w->sim.state, &pre));
	assert_int_equal(ctl_load_record(w->dir, "simfab", &rec, &err), 0);
	assert_true(state_equal(&rec.dev_states[0], &pre));
	ctl_record_free(&rec);

	/* The device dies at the read-back, every change made, so the
	 * rollback cannot undo them: ROLLBACK INCOMPLETE with the device at
	 * the target. The repair finishes the rollback the operator was told
	 * about; it used to find the target everywhere and commit it. */
	reset(w, &pre);
	assert_int_equal(ctl_load_record(w->dir, "simfab", &rec, &err), 0);
	uint64_t gen = rec.generation;
	ctl_record_free(&rec);
	w->sim.fail_at = 3 + 256;
	w->sim.fail_count = 1u << 30;
	assert_int_equal(apply(w, w->torus, 0, &res, &err), -1);
	assert_true(res.rolled_back);
	assert_false(res.rollback_ok);
	assert_true(journal_exists(w));
	assert_true(state_equal(&w->sim.state, &tgt));
	w->sim.fail_at = 0;
	c = open_ctl(w, w->torus);
	assert_int_equal(ctl_recover(c, &did, &err), 0);
	ctl_close(c);
	assert_true(did);
	assert_true(state_equal(&w->sim.state, &pre));
	assert_int_equal(ctl_load_record(w->dir, "simfab", &rec, &err), 0);
	assert_true(state_equal(&rec.dev_states[0], &pre));
	assert_int_equal(rec.generation, gen);
	ctl_record_free(&rec);
	assert_true(w->events[CTL_EV_RECOVERED] >= 2);
	state_free(&pre);
	state_free(&tgt);
}

static void test_trial(void **state)
{
	struct world *w = *state;
	struct device_state pre, tgt;
	struct ctl_result res, fin;
	struct ofc_error err = {0};
	char *name = NULL;
	uint64_t id;
	bool did;

	target_of(w, w->circ, &pre);
	target_of(w, w->torus, &tgt);

	/* Not confirmed: reverted. */
	reset(w, &pre);
	struct ctl *c = open_ctl(w, w->torus);
	assert_int_equal(ctl_plan(c, &err), 0);
	assert_int_equal(ctl_apply(c, 1e12, &res, &err), 0);
	assert_true(state_equal(&w->sim.state, &tgt));
	assert_false(ctl_trial_confirmed(c));
	assert_int_equal(ctl_trial_finish(c, false, &fin, &err), 0);
	assert_true(state_equal(&w->sim.state, &pre));
	ctl_close(c);

	/* Confirmed by another party: kept. */
	c = open_ctl(w, w->torus);
	assert_int_equal(ctl_plan(c, &err), 0);
	assert_int_equal(ctl_apply(c, 1e12, &res, &err), 0);
	assert_int_equal(ctl_confirm(w->dir, NULL, &name, &id, &err), 0);
	assert_string_equal(name, "simfab");
	assert_int_equal(id, res.txn);
	assert_true(ctl_trial_confirmed(c));
	assert_int_equal(ctl_trial_finish(c, true, &fin, &err), 0);
	assert_true(state_equal(&w->sim.state, &tgt));
	ctl_close(c);
	free(name);
	assert_int_equal(ctl_confirm(w->dir, NULL, &name, &id, &err), -1);

	/* A trial whose process died is reverted by the next changer. */
	c = open_ctl(w, w->circ);
	assert_int_equal(ctl_plan(c, &err), 0);
	assert_int_equal(ctl_apply(c, 1e12, &res, &err), 0);
	ctl_close(c); /* "crash": no finish */
	assert_true(state_equal(&w->sim.state, &pre));
	c = open_ctl(w, w->circ);
	assert_int_equal(ctl_recover(c, &did, &err), 0);
	assert_true(did);
	assert_true(state_equal(&w->sim.state, &tgt));
	ctl_close(c);
	state_free(&pre);
	state_free(&tgt);
}

/* ---- kill points: what a repair records ------------------------------------------ */

/* Two jobs' partitions of the 64 hosts; jobA's topology is %s. */
static const char part_fmt[] = "name: simfab\n"
			       "hosts: {count: 64, prefix: h, ports: 4}\n"
			       "switches:\n"
			       "  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}\n"
			       "wiring: {pattern: sequential, switches: [ocs0]}\n"
			       "partitions:\n"
			       "  - {name: jobA, hosts: [%s], topology: '%s'}\n"
			       "  - {name: jobB, hosts: [%s], topology: 'circulant:32:1,4'}\n";

static struct fabric *load_text(const char *file, const char *text)
{
	struct fabric *f;
	struct ofc_error err = {0};

	if (config_parse(file, text, strlen(text), &f, &err) < 0 || fabric_validate(f, &err) < 0)
		fail_msg("%s: %s", file, err.msg);
	return f;
}

static struct fabric *load_partitions(const char *file, const char *job_a)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

	for (int h = 0; h < 32; h++) {
		sb_printf(&a, "%sh%d", h ? ", " : "", h);
		sb_printf(&b, "%sh%d", h ? ", " : "", h + 32);
	}
	char *text = xasprintf(part_fmt, a.buf, job_a, b.buf);
	struct fabric *f = load_text(file, text);

	free(text);
	sb_free(&a);
	sb_free(&b);
	return f;
}

/* A transaction from base's commit to next's target (on one partition, or
 * renumbered to keep circuits), and what its commit records. */
struct txn_case {
	const char *what;
	struct fabric *base, *next;
	const char *partition;
	bool relabel;
	const char *topology, *config;
};

/* Where the process dies: before the first change, half-way, before the
 * read-back (every change made: "just before the commit"), with the
 * journal at committing and the record old, at committing and the record
 * new, after the commit; and the reproduction: the journal copied
 * while it ran, put back after the commit (the record new, the journal
 * applying). */
enum kill_at {
	KILL_FIRST_CHANGE,
	KILL_MID,
	KILL_BEFORE_READBACK,
	KILL_COMMITTING,
	KILL_RECORDED,
	KILL_DONE,
	KILL_JOURNAL_PUT_BACK,
	KILL_POINTS
};
static const char *const kill_names[] = {
    "before the first change", "half-way",	   "before the read-back", "committing, old record",
    "committing, new record",  "after the commit", "journal put back",
};

/* Rewrite the journal of snapshot cp (its bytes) in phase p. */
static void journal_again(struct ctl *c, const struct crash_point *cp, enum journal_phase p)
{
	const struct crash_file *jf = crash_file(cp, "simfab.journal");
	struct ofc_error err = {0};
	struct journal j;

	assert_non_null(jf);
	assert_int_equal(
	    journal_parse("simfab.journal", (const uint8_t *)jf->data, jf->len, &j, &err), 0);
	j.phase = p;
	assert_int_equal(journal_write(c, &j, &err), 0);
	journal_free(&j);
}

/* The commit's own write beside the record, as ofcd's holds are: it names
 * the transaction, so the test tells whose it is. */
static void commit_held(void *ctx, const struct ctl *c, struct store_write *w)
{
	char *s = xasprintf("the holds of transaction %llu", (unsigned long long)c->txn);

	(void)ctx;
	*w = (struct store_write){STORE_HELD, s, strlen(s)};
}

/* The store's FABRIC.held (NULL: none). */
static char *held_file(const struct world *w)
{
	char *path = xasprintf("%s/simfab.held", w->dir), *data = NULL;
	struct ofc_error err = {0};
	size_t len;

	if (access(path, F_OK) == 0)
		assert_int_equal(read_file(path, 4096, &data, &len, &err), 0);
	free(path);
	return data;
}

static void kill_and_repair(struct world *w, const struct txn_case *tc, enum kill_at k)
{
	struct ctl_result res;
	struct ofc_error err = {0};
	struct device_state pre, tgt;
	struct crash_point cp, done;
	struct ctl_record r0, r;
	bool did;

	/* base committed, whatever the device held */
	assert_int_equal(apply(w, tc->base, 0, &res, &err), 0);
	assert_int_equal(ctl_load_record(w->dir, "simfab", &r0, &err), 0);
	state_init(&pre, DEV_SWITCH);
	state_copy(&pre, &w->sim.state);

	/* the transaction: open (1) and read (2), n changes, the read-back */
	w->sim.commands = 0;
	struct ctl *c = open_ctl(w, tc->next);
	char *held = xasprintf("%s/simfab.held", w->dir);
	unlink(held); /* (the last case's) */
	free(held);
	c->commit_also = commit_held;
	/* Two rounds of the search, whatever the machine's load: a numbering
	 * that keeps more than the config's, which the record says relabelled
	 * only then. */
	struct relabel_opts ro = {.budget_s = 10, .max_rounds = 2, .seed = 1};
	struct fabric_relabel rep = {0};
	assert_int_equal(ctl_plan(c, &err), 0);
	if (tc->relabel)
		assert_int_equal(ctl_relabel(c, &relabel_direct, NULL, &ro, &rep, &err), 0);
	if (tc->partition)
		assert_int_equal(ctl_partition(c, fabric_find_partition(tc->next, tc->partition),
					       NULL, NULL, NULL, NULL, &err),
				 0);
	uint32_t n = ctl_plan_size(c);
	assert_true(n >= 2);
	crash_arm(&cp, w->dir, &w->sim,
		  k == KILL_FIRST_CHANGE ? 3
		  : k == KILL_MID	 ? 3 + n / 2
					 : 3 + n);
	assert_int_equal(ctl_apply(c, 0, &res, &err), 0);
	assert_true(cp.taken);
	state_init(&tgt, DEV_SWITCH);
	state_copy(&tgt, &w->sim.state);
	/* the points are where they say */
	assert_non_null(crash_file(&cp, "simfab.journal"));
	assert_int_equal(state_equal(&cp.state, &pre), k == KILL_FIRST_CHANGE);
	assert_int_equal(state_equal(&cp.state, &tgt), k >= KILL_BEFORE_READBACK);
	crash_arm(&done, w->dir, &w->sim, 0);
	crash_take(&done);
	assert_null(crash_file(&done, "simfab.journal"));

	/* what a kill -9 there leaves */
	if (k <= KILL_COMMITTING)
		crash_restore(&cp);
	else
		crash_restore(&done);
	if (k == KILL_COMMITTING || k == KILL_RECORDED)
		journal_again(c, &cp, JOURNAL_COMMITTING);
	else if (k == KILL_JOURNAL_PUT_BACK)
		journal_again(c, &cp, JOURNAL_APPLYING);
	ctl_close(c);

	/* repaired by the next command, which has base's config */
	c = open_ctl(w, tc->base);
	assert_int_equal(ctl_recover(c, &did, &err), 0);
	ctl_close(c);
	assert_int_equal(did, k != KILL_DONE);
	assert_int_equal(ctl_load_record(w->dir, "simfab", &r, &err), 0);
	assert_false(r.have_journal);
	if (k <= KILL_MID) {
		/* undone: the record before, as it was */
		assert_true(state_equal(&w->sim.state, &pre));
		assert_int_equal(r.generation, r0.generation);
		assert_string_equal(r.topology, r0.topology);
		assert_string_equal(r.config, r0.config);
		assert_true((r.partition == NULL) == (r0.partition == NULL));
		assert_int_equal(r.relabelled, r0.relabelled);
	} else {
		/* finished: what the transaction applied, not base's */
		assert_true(state_equal(&w->sim.state, &tgt));
		assert_true(state_equal(&r.dev_states[0], &tgt));
		assert_int_equal(r.generation, res.txn);
		if (strcmp(r.topology, tc->topology) != 0 || strcmp(r.config, tc->config) != 0 ||
		    (tc->partition && (!r.partition || strcmp(r.partition, tc->partition))) ||
		    (!tc->partition && r.partition) || r.relabelled != tc->relabel)
			fail_msg("%s, killed %s: recorded topology %s, config %s, partition %s, "
				 "relabelled %d",
				 tc->what, kill_names[k], r.topology, r.config,
				 r.partition ? r.partition : "-", r.relabelled);
		assert_true(r.moves_known);
		assert_int_equal(r.nmoves, 0);
	}
	/* The commit's own write with it, whoever commits: the repair has no
	 * callback, and used to leave it out (ofcd's hold lost, its prolog
	 * told "committed"); undone, none. */
	held = held_file(w);
	if (k <= KILL_MID) {
		assert_null(held);
	} else {
		char want[64];

		snprintf(want, sizeof(want), "the holds of transaction %llu",
			 (unsigned long long)res.txn);
		if (!held || strcmp(held, want) != 0)
			fail_msg("%s, killed %s: the held item after the repair is '%s', not '%s'",
				 tc->what, kill_names[k], held ? held : "(none)", want);
	}
	free(held);
	ctl_record_free(&r);
	ctl_record_free(&r0);
	crash_free(&cp);
	crash_free(&done);
	state_free(&pre);
	state_free(&tgt);
}

/* A transaction killed at any point and repaired by a command
 * with another config records what the transaction's journal says
 * (topology, config file, partition, relabelling), or undoes it. The
 * repair used to record the repairing command's topology and config, drop
 * the partition and the relabelling. */
static void test_kill_points(void **state)
{
	struct world *w = *state;
	struct fabric *a = load_text("a.yaml", "name: simfab\n"
					       "hosts: {count: 64, prefix: h, ports: 4}\n"
					       "switches:\n"
					       "  - {name: ocs0, type: ocs, ports: 256, "
					       "driver: {type: sim}}\n"
					       "wiring: {pattern: sequential, switches: [ocs0]}\n"
					       "topology: torus:8x8\n");
	static const char b_text[] =
	    "name: simfab\n"
	    "hosts: {count: 64, prefix: h, ports: 4}\n"
	    "switches:\n"
	    "  - {name: ocs0, type: ocs, ports: 256, driver: {type: sim}}\n"
	    "wiring: {pattern: sequential, switches: [ocs0]}\n"
	    "topology: circulant:64:3,7\n";
	struct fabric *b = load_text("b.yaml", b_text);
	struct fabric *p1 = load_partitions("p1.yaml", "torus:4x8");
	struct fabric *p2 = load_partitions("p2.yaml", "circulant:32:1,3");
	const struct txn_case cases[] = {
	    {"a to b", a, b, NULL, false, "circulant:64:3,7", "b.yaml"},
	    {"a to b relabelled", a, b, NULL, true, "circulant:64:3,7", "b.yaml"},
	    {"partition jobA", p1, p2, "jobA", false, "circulant:32:1,3", "p2.yaml"},
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		for (int k = 0; k < KILL_POINTS; k++) {
			struct txn_case tc = cases[i];

			/* A relabelling renumbers the fabric it plans: each kill
			 * point starts from the config's numbering (else the last
			 * one's is the config's, nothing is renumbered, and the
			 * record rightly says so). */
			if (tc.relabel)
				tc.next = load_text("b.yaml", b_text);
			kill_and_repair(w, &tc, (enum kill_at)k);
			if (tc.relabel)
				fabric_free(tc.next);
		}
	fabric_free(a);
	fabric_free(b);
	fabric_free(p1);
	fabric_free(p2);
}

static void test_lock(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	struct ctl *a = open_ctl(w, w->torus), *b = open_ctl(w, w->torus);
	char want[64];

	assert_int_equal(ctl_lock(a, &err), 0);
	assert_int_equal(ctl_lock(b, &err), -1);
	snprintf(want, sizeof(want), "(pid %d)", (int)getpid());
	assert_non_null(strstr(err.msg, want));
	ctl_close(a);
	assert_int_equal(ctl_lock(b, &err), 0);
	ctl_close(b);
}

/* A lock held only by a child forked while it was open, the ctl that took
 * it closed (a planner between fork and exec): taken once the child is
 * gone, not refused as held by this process. */
static void test_lock_child(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	struct ctl *a = open_ctl(w, w->torus), *b = open_ctl(w, w->torus);
	pid_t pid;

	assert_int_equal(ctl_lock(a, &err), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		usleep(300000);
		_exit(0);
	}
	ctl_close(a);
	if (ctl_lock(b, &err) != 0)
		fail_msg("%s", err.msg);
	ctl_close(b);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void test_overrides(void **state)
{
	struct world *w = *state;
	const char *bad[] = {"ocs1=127.0.0.1:5"};
	const char *good[] = {"ocs0=127.0.0.1:5"};
	struct ctl_opts o = {.state_dir = w->dir, .overrides = bad, .noverrides = 1};
	struct ofc_error err = {0};
	struct ctl *c;

	assert_int_equal(ctl_open(w->torus, &o, &c, &err), -1);
	assert_int_equal(err.code, OFC_E_USAGE);
	o.overrides = good;
	assert_int_equal(ctl_open(w->torus, &o, &c, &err), 0);
	assert_string_equal(c->devs[0].dev.cfg.address, "127.0.0.1:5");
	ctl_close(c);
}

/* A candidate config that reaches a device otherwise (here another
 * credentials file) and fails to read it does not make the running device
 * lost: no DEVICE_LOST event (ofcd would show it to every watcher, and in
 * the state), and the running ctl's lost flag is not handed back. One that
 * reaches it the same way speaks for it. */
static void test_candidate_quiet(void **state)
{
	struct world *w = *state;
	struct ctl *run = open_ctl(w, w->torus), *same = open_ctl(w, w->torus),
		   *other = open_ctl(w, w->torus);
	struct ofc_error err = {0};

	other->devs[0].cfg.credentials = "other.cred";
	ctl_quiet(same, run);
	ctl_quiet(other, run);
	assert_false(same->devs[0].quiet);
	assert_true(other->devs[0].quiet);

	w->sim.fail_at = w->sim.commands + 1;
	w->sim.fail_count = 1u << 30;
	w->sim.mode = FAULT_CLOSE;
	memset(w->events, 0, sizeof(w->events));
	assert_int_equal(ctl_read(other, &err), -1);
	ofc_error_clear(&err);
	assert_true(other->devs[0].lost);
	assert_int_equal(w->events[CTL_EV_DEVICE_LOST], 0);
	ctl_handover(other, run);
	assert_false(run->devs[0].lost);

	assert_int_equal(ctl_read(same, &err), -1);
	ofc_error_clear(&err);
	assert_int_equal(w->events[CTL_EV_DEVICE_LOST], 1);
	ctl_handover(same, run);
	assert_true(run->devs[0].lost);

	/* Committed: the candidate is the running ctl and reports again. */
	ctl_quiet(other, NULL);
	assert_false(other->devs[0].quiet);
	w->sim.fail_at = 0;
	assert_int_equal(ctl_read(run, &err), 0);
	assert_int_equal(w->events[CTL_EV_DEVICE_BACK], 1);
	ctl_close(run);
	ctl_close(same);
	ctl_close(other);
}

/* The device's own lock (a NETCONF <lock>; here the sim's, lockable): a
 * transaction takes it before anything is journalled or changed and lets
 * go at its end; held by another manager, the transaction is refused with
 * nothing changed and no journal; held already by this session (a fence a
 * caller keeps across transactions), the transaction neither takes nor
 * releases it. */
static void test_device_locks(void **state)
{
	struct world *w = *state;
	struct device_state pre, tgt;
	struct ctl_result res;
	struct ofc_error err = {0};
	bool held;

	target_of(w, w->circ, &pre);
	target_of(w, w->torus, &tgt);
	reset(w, &pre);
	w->sim.lockable = true;
	assert_int_equal(apply(w, w->torus, 0, &res, &err), 0);
	assert_true(state_equal(&w->sim.state, &tgt));
	assert_false(w->sim.locked);
	/* open, read; lock, read again; changes; read-back; unlock */
	assert_int_equal(w->sim.commands, 6 + res.ops_applied);

	reset(w, &pre);
	w->sim.lockable = true;
	w->sim.lock_held_elsewhere = true;
	assert_int_equal(apply(w, w->torus, 0, &res, &err), -1);
	assert_string_equal(err.msg, "ocs0: lock: the lock is held by another session");
	assert_true(state_equal(&w->sim.state, &pre));
	assert_false(journal_exists(w));
	w->sim.lock_held_elsewhere = false;

	struct ctl *c = open_ctl(w, w->torus);
	assert_int_equal(ctl_plan(c, &err), 0);
	assert_int_equal(device_lock(&c->devs[0].dev, &held, &err), 0);
	assert_true(held);
	assert_int_equal(ctl_apply(c, 0, &res, &err), 0);
	assert_true(w->sim.locked); /* the fence outlives the transaction */
	assert_int_equal(device_unlock(&c->devs[0].dev, &err), 0);
	assert_false(w->sim.locked);
	ctl_close(c);
	w->sim.lockable = false;
	state_free(&pre);
	state_free(&tgt);
}

/* ---- a replicated daemon's fence and the devices' locks ------------------- */

struct fence_ctx {
	double until;	   /* what the fence says */
	uint64_t close_at; /* the sim command at which it closes */
};

static double fence_fn(void *ctx)
{
	return ((struct fence_ctx *)ctx)->until;
}

static void close_fence(void *ctx, uint64_t command)
{
	struct fence_ctx *f = ctx;

	if (command >= f->close_at)
		f->until = -1;
}

/* A fence that closes in the middle of an apply (the leader deposed)
 * stops it at its next command: no command goes out after, nothing is
 * undone, the journal stays for the next leader, whose repair (a ctl with
 * its fence open) undoes it. A device's own lock held elsewhere refuses
 * an apply before its journal, and a lock taken is let go of at the end. */
static void test_fence(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	struct ctl_result res;
	struct fence_ctx fc = {.until = now_seconds() + 3600};
	struct device_state torus;
	struct ctl *c;
	bool did;

	assert_int_equal(apply(w, w->torus, 0, &res, &err), 0);
	target_of(w, w->torus, &torus);
	struct ctl_opts o = {.state_dir = w->dir,
			     .sim_lookup = lookup,
			     .on_event = on_event,
			     .ctx = w,
			     .fence = fence_fn,
			     .fence_ctx = &fc};
	assert_int_equal(ctl_open(w->circ, &o, &c, &err), 0);
	assert_int_equal(ctl_plan(c, &err), 0);
	fc.close_at = w->sim.commands + 20;
	w->sim.before_command = close_fence;
	w->sim.hook_ctx = &fc;
	uint32_t rolled = w->events[CTL_EV_TXN_ROLLING_BACK];
	assert_int_equal(ctl_apply(c, 0, &res, &err), -1);
	assert_int_equal(err.reason, OFC_R_FENCED);
	assert_false(res.rolled_back);
	assert_int_equal(w->events[CTL_EV_TXN_ROLLING_BACK], rolled);
	/* the command at which it closed went (it was checked before), none after */
	assert_int_equal(w->sim.commands, fc.close_at);
	assert_false(state_equal(&w->sim.state, &torus));
	ctl_close(c);
	w->sim.before_command = NULL;
	struct ctl_record r;
	assert_int_equal(ctl_load_record(w->dir, "simfab", &r, &err), 0);
	assert_true(r.have_journal);
	assert_int_equal(r.generation, 1);
	ctl_record_free(&r);
	/* the next leader repairs it: undone, back at the torus */
	fc.until = now_seconds() + 3600;
	assert_int_equal(ctl_open(w->circ, &o, &c, &err), 0);
	assert_int_equal(ctl_recover(c, &did, &err), 0);
	assert_true(did);
	assert_true(state_equal(&w->sim.state, &torus));
	ctl_close(c);

	/* the device's lock (taken by every transaction) held by
	 * another manager, a deposed leader's session: refused, nothing
	 * written */
	w->sim.lockable = true;
	w->sim.lock_held_elsewhere = true;
	assert_int_equal(ctl_open(w->circ, &o, &c, &err), 0);
	assert_int_equal(ctl_plan(c, &err), 0);
	assert_int_equal(ctl_apply(c, 0, &res, &err), -1);
	assert_int_equal(err.reason, OFC_R_REFUSED);
	assert_true(state_equal(&w->sim.state, &torus));
	assert_int_equal(ctl_load_record(w->dir, "simfab", &r, &err), 0);
	assert_false(r.have_journal);
	ctl_record_free(&r);
	/* free again: applied under the lock, which is let go of after */
	w->sim.lock_held_elsewhere = false;
	assert_int_equal(ctl_apply(c, 0, &res, &err), 0);
	assert_false(w->sim.locked);
	ctl_close(c);
	state_free(&torus);
}

/* The record's ids after each step: generation, last id used. */
static void ids_are(struct world *w, uint64_t gen, uint64_t last)
{
	struct ofc_error err = {0};
	struct ctl_record rec;

	assert_int_equal(ctl_load_record(w->dir, "simfab", &rec, &err), 0);
	assert_int_equal(rec.generation, gen);
	assert_int_equal(rec.last_txn, last);
	assert_null(rec.replica); /* a files store names no replica */
	ctl_record_free(&rec);
}

/* A rolled-back transaction's id is never used again: not after a
 * rollback that kept the old generation, not after a journal that the
 * next changer repaired. (The record kept the generation alone, so the
 * next transaction was numbered as the rolled-back one.) */
static void test_txn_ids(void **state)
{
	struct world *w = *state;
	struct device_state pre, tgt;
	struct ctl_result res;
	struct ofc_error err = {0};
	bool did;

	target_of(w, w->circ, &pre);
	target_of(w, w->torus, &tgt);
	reset(w, &pre);
	assert_int_equal(apply(w, w->torus, 0, &res, &err), 0);
	assert_int_equal(res.txn, 1);
	ids_are(w, 1, 1);
	/* 2 fails half-way and is undone: the record keeps generation 1
	 * and says 2 was used */
	w->sim.fail_at = w->sim.commands + 100;
	w->sim.mode = FAULT_DENY;
	assert_int_equal(apply(w, w->circ, 0, &res, &err), -1);
	assert_true(res.rolled_back && res.rollback_ok);
	assert_int_equal(res.txn, 2);
	assert_true(state_equal(&w->sim.state, &tgt));
	ids_are(w, 1, 2);
	w->sim.fail_at = 0;
	assert_int_equal(apply(w, w->circ, 0, &res, &err), 0);
	assert_int_equal(res.txn, 3);
	ids_are(w, 3, 3);
	/* 4 leaves its journal (the device dies, the undo cannot reach
	 * it); the repair rolls it back, and the next is 5 */
	w->sim.fail_at = w->sim.commands + 100;
	w->sim.fail_count = 1u << 30;
	w->sim.mode = FAULT_CLOSE;
	assert_int_equal(apply(w, w->torus, 0, &res, &err), -1);
	assert_int_equal(res.txn, 4);
	assert_false(res.rollback_ok);
	assert_true(journal_exists(w));
	w->sim.fail_at = 0;
	struct ctl *c = open_ctl(w, w->torus);
	assert_int_equal(ctl_recover(c, &did, &err), 0);
	assert_true(did);
	ctl_close(c);
	ids_are(w, 3, 4);
	assert_int_equal(apply(w, w->torus, 0, &res, &err), 0);
	assert_int_equal(res.txn, 5);
	ids_are(w, 5, 5);
	/* the whole fabric's commit: its topology is the fabric's */
	struct ctl_record rec;
	assert_int_equal(ctl_load_record(w->dir, "simfab", &rec, &err), 0);
	assert_string_equal(rec.fabric_topology, "torus:8x8");
	ctl_record_free(&rec);
	state_free(&pre);
	state_free(&tgt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_fault_sweep, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_recovery, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trial, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_kill_points, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lock, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_lock_child, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_device_locks, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_overrides, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_candidate_quiet, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_fence, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_txn_ids, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
