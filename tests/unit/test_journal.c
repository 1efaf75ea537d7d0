/* The state directory's files (controller/reconfig/journal.c): the
 * recorded state and the journal survive a round trip through disk exactly,
 * a file that is not the message it should be is refused with its path and
 * the way out, a journal whose before and target lists disagree is refused,
 * and ctl_load_record shows what is there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/reconfig/internal.h"
#include "proto/state.pb-c.h"
#include "tests/unit/sim_world.h"

static const char cfg[] = "name: jfab\n"
			  "hosts: {count: 16, prefix: h, ports: 2}\n"
			  "switches:\n"
			  "  - {name: ocs0, type: ocs, ports: 32, driver: {type: sim}}\n"
			  "wiring: {pattern: sequential, switches: [ocs0]}\n"
			  "topology: ring:16\n";

struct world {
	char dir[64];
	struct fabric *f;
	struct ctl *c;
};

static int setup(void **state)
{
	struct world *w = xcalloc(1, sizeof(*w));
	struct ofc_error err = {0};

	test_state_dir(w->dir, sizeof(w->dir), "journal");
	w->f = test_fabric("j.yaml", cfg);
	struct ctl_opts o = {.state_dir = w->dir, .no_testbed = true};
	assert_int_equal(ctl_open(w->f, &o, &w->c, &err), 0);
	assert_int_equal(w->c->ndevs, 1);
	*state = w;
	return 0;
}

static int teardown(void **state)
{
	struct world *w = *state;

	ctl_close(w->c);
	fabric_free(w->f);
	test_state_dir_remove(w->dir);
	free(w);
	return 0;
}

static void write_file(const char *dir, const char *name, const void *data, size_t len)
{
	char *path = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
	free(path);
}

static void some_state(struct device_state *s, uint32_t salt)
{
	state_init(s, DEV_SWITCH);
	for (uint32_t i = 1; i <= 8; i++)
		state_add_xconn(s, i, (i * 7 + salt) % 32 + 1);
	state_sort(s);
}

static void test_record_round_trip(void **state)
{
	struct world *w = *state;
	struct device_state s;
	struct ctl_record r;
	struct ofc_error err = {0};

	some_state(&s, 3);
	assert_int_equal(
	    record_write(w->c, 42, &s, &(struct txn_meta){"ring:16", "j.yaml", NULL, true}, &err),
	    0);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_true(r.have_state);
	assert_false(r.have_journal);
	assert_int_equal(r.generation, 42);
	assert_string_equal(r.topology, "ring:16");
	assert_true(r.relabelled);
	assert_string_equal(r.config, "j.yaml");
	assert_int_equal(r.ndevs, 1);
	assert_string_equal(r.dev_names[0], "ocs0");
	assert_true(state_equal(&r.dev_states[0], &s));
	assert_true(r.time_unix_ms > 0);
	ctl_record_free(&r);
	/* A rollback records the config of the record before, not its own. */
	assert_int_equal(record_write(w->c, 41, &s,
				      &(struct txn_meta){"ring:8", "before.yaml", NULL, false},
				      &err),
			 0);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_string_equal(r.config, "before.yaml");
	assert_string_equal(r.topology, "ring:8");
	assert_false(r.relabelled);
	assert_false(r.moves_known); /* a rollback to an older ofc's record */
	ctl_record_free(&r);
	/* Moved ports, known. */
	struct port_move mv[] = {{"h1", 0, 1}};
	assert_int_equal(
	    record_write(w->c, 43, &s,
			 &(struct txn_meta){"ring:16", "j.yaml", NULL, false, mv, 1, true}, &err),
	    0);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_true(r.moves_known);
	assert_int_equal(r.nmoves, 1);
	assert_string_equal(r.moves[0].host, "h1");
	assert_int_equal(r.moves[0].from, 0);
	assert_int_equal(r.moves[0].to, 1);
	ctl_record_free(&r);
	state_free(&s);

	char **names;
	uint32_t n;
	assert_int_equal(ctl_list_fabrics(w->dir, &names, &n, &err), 0);
	assert_int_equal(n, 1);
	assert_string_equal(names[0], "jfab");
	free(names[0]);
	free(names);
}

/* What a record says of the fabric's topology and the ids used, written
 * now and by an older ofc: a partition's commit keeps the fabric's
 * topology beside its own; an older record says it only for a whole
 * fabric's commit, and its generation is the last id it knows. */
static void test_record_ids_and_topology(void **state)
{
	struct world *w = *state;
	struct ofc_error err = {0};
	struct device_state s;
	struct ctl_record r;
	uint8_t buf[256];

	some_state(&s, 3);
	w->c->txn = 9; /* a rolled-back transaction records generation 7 */
	assert_int_equal(record_write(w->c, 7, &s,
				      &(struct txn_meta){.topology = "ring:4",
							 .config = "j.yaml",
							 .partition = "p",
							 .fabric_topology = "ring:16"},
				      &err),
			 0);
	w->c->txn = 0;
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_int_equal(r.generation, 7);
	assert_int_equal(r.last_txn, 9);
	assert_string_equal(r.topology, "ring:4");
	assert_string_equal(r.partition, "p");
	assert_string_equal(r.fabric_topology, "ring:16");
	ctl_record_free(&r);
	state_free(&s);

	Ofc__V1__FabricRecord fr = OFC__V1__FABRIC_RECORD__INIT;
	fr.fabric = "jfab";
	fr.has_generation = true;
	fr.generation = 4;
	fr.topology = "ring:4";
	fr.partition = "p";
	write_file(w->dir, "jfab.state", buf, ofc__v1__fabric_record__pack(&fr, buf));
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_int_equal(r.last_txn, 4);
	assert_null(r.fabric_topology); /* not known: the config's, say its readers */
	ctl_record_free(&r);
	fr.partition = NULL;
	write_file(w->dir, "jfab.state", buf, ofc__v1__fabric_record__pack(&fr, buf));
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_string_equal(r.fabric_topology, "ring:4");
	ctl_record_free(&r);
}

static void test_journal_round_trip(void **state)
{
	struct world *w = *state;
	struct journal j = {0}, back;
	struct ofc_error err = {0};
	bool missing;
	char *names[] = {"ocs0"}, *drivers[] = {"sim"};
	struct device_state before, target;

	assert_int_equal(journal_read(w->c->store, "jfab", &back, &missing, &err), 0);
	assert_true(missing);
	some_state(&before, 1);
	some_state(&target, 5);
	struct port_move moves[] = {{"h3", 0, 1}, {"h5", 1, 0}};
	j.id = 7;
	j.phase = JOURNAL_TRIAL;
	j.version = STATE_VERSION;
	j.meta = (struct txn_meta){.topology = "ring:16",
				   .config = "other.yaml",
				   .partition = "jobA",
				   .relabelled = true,
				   .moves = moves,
				   .nmoves = 2,
				   .moves_known = true,
				   .principal = "cn:tenant-a"};
	j.started_ms = 1234;
	j.trial_deadline = 1.5e9;
	j.ndevs = 1;
	j.names = names;
	j.drivers = drivers;
	j.before = &before;
	j.target = &target;
	assert_int_equal(journal_write(w->c, &j, &err), 0);
	assert_int_equal(journal_read(w->c->store, "jfab", &back, &missing, &err), 0);
	assert_false(missing);
	assert_int_equal(back.id, 7);
	assert_int_equal(back.phase, JOURNAL_TRIAL);
	assert_int_equal(back.pid, (uint32_t)getpid());
	assert_int_equal(back.started_ms, 1234);
	assert_true(back.trial_deadline == 1.5e9);
	assert_int_equal(back.ndevs, 1);
	assert_string_equal(back.names[0], "ocs0");
	assert_string_equal(back.drivers[0], "sim");
	assert_true(state_equal(&back.before[0], &before));
	assert_true(state_equal(&back.target[0], &target));
	assert_false(state_equal(&back.before[0], &back.target[0]));
	/* what its commit will record, whatever config commits it */
	assert_int_equal(back.version, STATE_VERSION);
	assert_string_equal(back.meta.topology, "ring:16");
	assert_string_equal(back.meta.config, "other.yaml");
	assert_string_equal(back.meta.partition, "jobA");
	assert_true(back.meta.relabelled);
	assert_true(back.meta.moves_known);
	assert_int_equal(back.meta.nmoves, 2);
	assert_string_equal(back.meta.moves[1].host, "h5");
	assert_int_equal(back.meta.moves[1].from, 1);
	assert_int_equal(back.meta.moves[1].to, 0);
	assert_string_equal(back.meta.principal, "cn:tenant-a");
	journal_free(&back);

	/* status sees it, and whether its writer still runs */
	struct ctl_record r;
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_true(r.have_journal);
	assert_int_equal(r.journal_id, 7);
	assert_string_equal(r.journal_phase, "trial");
	assert_string_equal(r.journal_principal, "cn:tenant-a");
	ctl_record_free(&r);

	assert_int_equal(journal_remove(w->c, &err), 0);
	assert_int_equal(journal_read(w->c->store, "jfab", &back, &missing, &err), 0);
	assert_true(missing);
	state_free(&before);
	state_free(&target);
}

static void test_damaged_files_refused(void **state)
{
	struct world *w = *state;
	struct ctl_record r;
	struct journal j;
	struct ofc_error err = {0};
	bool missing;
	static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x13};

	write_file(w->dir, "jfab.state", garbage, sizeof(garbage));
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), -1);
	assert_non_null(strstr(err.file, "jfab.state"));
	assert_non_null(strstr(err.msg, "corrupt file"));
	assert_non_null(strstr(err.msg, "move it aside"));
	unlink(strstr(err.file, w->dir));

	ofc_error_clear(&err);
	write_file(w->dir, "jfab.journal", garbage, sizeof(garbage));
	assert_int_equal(journal_read(w->c->store, "jfab", &j, &missing, &err), -1);
	assert_false(missing);
	assert_non_null(strstr(err.msg, "corrupt file"));

	/* A Journal message without an id is not a journal ofc wrote. */
	ofc_error_clear(&err);
	write_file(w->dir, "jfab.journal", "", 0);
	assert_int_equal(journal_read(w->c->store, "jfab", &j, &missing, &err), -1);
	assert_non_null(strstr(err.msg, "not a journal ofc wrote"));

	/* Nor is one of version 0 or 1 (no version is an older ofc's), and
	 * a record of such a version is damaged too (the fuzzer's find). */
	uint8_t buf[64];
	Ofc__V1__Journal m = OFC__V1__JOURNAL__INIT;
	m.has_id = m.has_phase = m.has_version = true;
	m.id = 3;
	m.phase = OFC__V1__JOURNAL__PHASE__PHASE_APPLYING;
	for (uint32_t v = 0; v < 2; v++) {
		m.version = v;
		write_file(w->dir, "jfab.journal", buf, ofc__v1__journal__pack(&m, buf));
		assert_int_equal(journal_read(w->c->store, "jfab", &j, &missing, &err), -1);
		assert_non_null(strstr(err.msg, "not a journal ofc wrote"));
	}
	char *jp = xasprintf("%s/jfab.journal", w->dir);
	unlink(jp);
	free(jp);
	Ofc__V1__FabricRecord fr = OFC__V1__FABRIC_RECORD__INIT;
	fr.fabric = "jfab";
	fr.has_generation = fr.has_version = true;
	fr.generation = 4;
	fr.version = 1;
	write_file(w->dir, "jfab.state", buf, ofc__v1__fabric_record__pack(&fr, buf));
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), -1);
	assert_non_null(strstr(err.msg, "corrupt file: version 1, which no ofc writes"));
}

static char *slurp(const char *dir, const char *name, size_t *len)
{
	char *path = xasprintf("%s/%s", dir, name), *data = NULL;
	struct ofc_error err = {0};

	if (read_file(path, 1 << 20, &data, len, &err) < 0)
		data = NULL;
	free(path);
	return data;
}

/* A damaged state file stops plan and apply with the command that moves it
 * aside, and is left as it was: plan and apply used to ignore it, number
 * the next transaction 1 and overwrite it. */
static void test_damaged_state_stops_changes(void **state)
{
	struct world *w = *state;
	struct ctl_result res;
	struct ofc_error err = {0};
	static const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x13};
	char *path = xasprintf("%s/jfab.state", w->dir), *before, *after;
	size_t blen, alen;

	write_file(w->dir, "jfab.state", garbage, sizeof(garbage));
	assert_int_equal(ctl_plan(w->c, &err), -1);
	assert_string_equal(err.file, path);
	char *want = xasprintf("corrupt file: not an ofc.v1.FabricRecord message. Nothing is "
			       "planned or changed while it is there; move it aside to start a "
			       "new record: mv '%s' '%s.corrupt'",
			       path, path);
	assert_string_equal(err.msg, want);
	free(want);
	assert_int_equal(ctl_apply(w->c, 0, &res, &err), -1);
	assert_non_null(strstr(err.msg, "corrupt file"));
	before = slurp(w->dir, "jfab.state", &blen);
	assert_int_equal(blen, sizeof(garbage));
	assert_memory_equal(before, garbage, blen);
	free(before);

	/* A FabricRecord, but two cross-connects on one ingress. */
	struct device_state s;
	some_state(&s, 3);
	state_add_xconn(&s, 1, 30);
	state_sort(&s);
	assert_int_equal(
	    record_write(w->c, 5, &s, &(struct txn_meta){"ring:16", "j.yaml", NULL, false}, &err),
	    0);
	state_free(&s);
	before = slurp(w->dir, "jfab.state", &blen);
	assert_int_equal(ctl_plan(w->c, &err), -1);
	assert_non_null(strstr(err.msg, "device 'ocs0': ingress 1 is cross-connected twice"));
	assert_non_null(strstr(err.msg, "mv '"));
	assert_int_equal(ctl_apply(w->c, 0, &res, &err), -1);
	after = slurp(w->dir, "jfab.state", &alen);
	assert_int_equal(alen, blen);
	assert_memory_equal(after, before, blen);
	free(before);
	free(after);

	/* Moved aside, planning works again. */
	char *aside = xasprintf("%s.corrupt", path);
	assert_int_equal(rename(path, aside), 0);
	assert_int_equal(ctl_plan(w->c, &err), 0);
	free(aside);
	free(path);
}

/* A record's ports are checked against the config's switch: 40 -> 5 on
 * this 32-port switch is a corrupt record (named with its file, the
 * device and the port) for everything that plans beside the config, and
 * port 0 is no port even where the switch's size is not known. */
static void test_record_ports_checked(void **state)
{
	struct world *w = *state;
	struct ctl_record r;
	struct ofc_error err = {0};
	struct device_state s;
	char *path = xasprintf("%s/jfab.state", w->dir);

	state_init(&s, DEV_SWITCH);
	state_add_xconn(&s, 40, 5);
	assert_int_equal(
	    record_write(w->c, 5, &s, &(struct txn_meta){"ring:16", "j.yaml", NULL, false}, &err),
	    0);
	assert_int_equal(ctl_load_record_for(w->c, &r, &err), -1);
	assert_string_equal(err.file, path);
	char *want = xasprintf("corrupt file: device 'ocs0': cross-connect 40 -> 5: port 40 is "
			       "outside the switch's ports 1..32. Nothing is planned or changed "
			       "while it is there; move it aside to start a new record: mv '%s' "
			       "'%s.corrupt'",
			       path, path);
	assert_string_equal(err.msg, want);
	free(want);
	assert_int_equal(ctl_plan(w->c, &err), -1);
	assert_non_null(strstr(err.msg, "port 40 is outside the switch's ports 1..32"));
	state_clear(&s);
	state_add_xconn(&s, 3, 33);
	assert_int_equal(
	    record_write(w->c, 5, &s, &(struct txn_meta){"ring:16", "j.yaml", NULL, false}, &err),
	    0);
	assert_int_equal(ctl_load_record_for(w->c, &r, &err), -1);
	assert_non_null(strstr(err.msg, "cross-connect 3 -> 33: port 33 is outside"));
	/* the last port is one */
	state_clear(&s);
	state_add_xconn(&s, 32, 1);
	assert_int_equal(
	    record_write(w->c, 5, &s, &(struct txn_meta){"ring:16", "j.yaml", NULL, false}, &err),
	    0);
	assert_int_equal(ctl_load_record_for(w->c, &r, &err), 0);
	ctl_record_free(&r);
	/* port 0, without the config */
	state_clear(&s);
	state_add_xconn(&s, 0, 5);
	assert_int_equal(
	    record_write(w->c, 5, &s, &(struct txn_meta){"ring:16", "j.yaml", NULL, false}, &err),
	    0);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), -1);
	assert_non_null(strstr(err.msg, "device 'ocs0': cross-connect 0 -> 5: port 0 is no port "
					"(ports count from 1)"));
	assert_null(strstr(err.msg, "1..0"));
	state_free(&s);
	free(path);
}

static void journal_with(struct world *w, enum journal_phase phase, struct device_state *before,
			 struct device_state *target)
{
	struct journal j = {0};
	struct ofc_error err = {0};
	char *names[] = {"ocs0"}, *drivers[] = {"sim"};

	j.id = 9;
	j.phase = phase;
	j.version = STATE_VERSION;
	j.meta = (struct txn_meta){.topology = "ring:16", .config = "j.yaml", .moves_known = true};
	j.ndevs = 1;
	j.names = names;
	j.drivers = drivers;
	j.before = before;
	j.target = target;
	assert_int_equal(journal_write(w->c, &j, &err), 0);
}

/* The sim switch of the config, as recovery will find it. */
static void device_holds(struct world *w, const struct device_state *s)
{
	struct ofc_error err = {0};

	assert_int_equal(ctl_read(w->c, &err), 0);
	struct op_batch b = {0};
	uint32_t done;
	state_diff(&w->c->devs[0].actual, s, &b);
	assert_int_equal(device_apply(&w->c->devs[0].dev, &b, &done, &err), 0);
	batch_free(&b);
	assert_int_equal(ctl_read(w->c, &err), 0);
	assert_true(state_equal(&w->c->devs[0].actual, s));
}

/* Who asked for a transaction (ctl_opts.principal) is in its journal and
 * in the record of its commit; a record that does not say says nothing. */
static void test_principal_recorded(void **state)
{
	struct world *w = *state;
	struct ctl_result res;
	struct ctl_record r;
	struct ofc_error err = {0};

	assert_int_equal(ctl_plan(w->c, &err), 0);
	assert_int_equal(ctl_apply(w->c, 0, &res, &err), 0);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_null(r.principal);
	ctl_record_free(&r);
	struct ctl *c;
	struct ctl_opts o = {.state_dir = w->dir, .no_testbed = true, .principal = "cn:tenant-a"};
	ctl_close(w->c);
	assert_int_equal(ctl_open(w->f, &o, &c, &err), 0);
	w->c = c;
	struct device_state s;
	some_state(&s, 9);
	device_holds(w, &s);
	state_free(&s);
	assert_int_equal(ctl_plan(w->c, &err), 0);
	assert_true(ctl_plan_size(w->c) > 0);
	assert_int_equal(ctl_apply(w->c, 0, &res, &err), 0);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_string_equal(r.principal, "cn:tenant-a");
	assert_int_equal(r.generation, res.txn);
	ctl_record_free(&r);
}

/* Every journal value is checked against the device before anything is
 * driven to it: an egress of 4294967042 on this 32-port switch (which a
 * TL1 command would have sent as N + 4294967042 = port 2 on a 256-port
 * switch) leaves the device untouched and says how to get out. */
static void test_journal_values_checked(void **state)
{
	struct world *w = *state;
	struct device_state before, target, now;
	struct ofc_error err = {0};
	bool did;

	some_state(&before, 1);
	some_state(&target, 5);
	device_holds(w, &before);
	state_add_xconn(&target, 9, 4294967042u);
	state_sort(&target);
	journal_with(w, JOURNAL_APPLYING, &before, &target);
	assert_int_equal(ctl_recover(w->c, &did, &err), -1);
	assert_non_null(strstr(err.file, "jfab.journal"));
	assert_non_null(strstr(err.msg, "the target state of device 'ocs0' does not fit the "
					"device (cross-connect 9 -> 4294967042: port 4294967042 is "
					"outside the switch's ports 1..32)"));
	assert_non_null(strstr(err.msg, ".corrupt'"));
	assert_int_equal(ctl_read(w->c, &err), 0);
	assert_true(state_equal(&w->c->devs[0].actual, &before));
	state_free(&target);

	/* Two cross-connects on one egress in the previous state. */
	some_state(&target, 5);
	state_init(&now, DEV_SWITCH);
	state_add_xconn(&now, 1, 2);
	state_add_xconn(&now, 3, 2);
	journal_with(w, JOURNAL_APPLYING, &now, &target);
	assert_int_equal(ctl_recover(w->c, &did, &err), -1);
	assert_non_null(strstr(err.msg, "egress 2 is cross-connected twice"));
	state_free(&now);

	/* An unknown phase is not a journal ofc wrote. */
	journal_with(w, (enum journal_phase)7, &before, &target);
	assert_int_equal(ctl_recover(w->c, &did, &err), -1);
	assert_non_null(strstr(err.msg, "not a journal ofc wrote"));
	assert_int_equal(ctl_read(w->c, &err), 0);
	assert_true(state_equal(&w->c->devs[0].actual, &before));
	state_free(&before);
	state_free(&target);
}

/* After ROLLBACK INCOMPLETE the devices may hold the target: the repair
 * still finishes the rollback (it used to commit the target). A crash
 * while applying, with the target reached everywhere, is finished. */
static void test_repair_keeps_direction(void **state)
{
	struct world *w = *state;
	struct device_state before, target;
	struct ctl_record r;
	struct ofc_error err = {0};
	bool did;

	some_state(&before, 1);
	some_state(&target, 5);
	device_holds(w, &target);
	journal_with(w, JOURNAL_ROLLING_BACK, &before, &target);
	assert_int_equal(ctl_recover(w->c, &did, &err), 0);
	assert_true(did);
	assert_int_equal(ctl_read(w->c, &err), 0);
	assert_true(state_equal(&w->c->devs[0].actual, &before));
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_false(r.have_journal);
	assert_true(state_equal(&r.dev_states[0], &before));
	ctl_record_free(&r);

	journal_with(w, JOURNAL_APPLYING, &target, &before);
	assert_int_equal(ctl_recover(w->c, &did, &err), 0);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_false(r.have_journal);
	assert_int_equal(r.generation, 9);
	assert_true(state_equal(&r.dev_states[0], &before));
	ctl_record_free(&r);
	state_free(&before);
	state_free(&target);
}

/* A journal an older ofc wrote (no version: no relabelling, no moved
 * ports in it) is undone as before, but never committed: its commit would
 * guess those from the repairing command's config. The refusal names the
 * file and the mv; the journal, the record and the device stay as they
 * were. */
static void test_old_journal(void **state)
{
	struct world *w = *state;
	struct device_state before, target;
	struct ofc_error err = {0};
	struct ctl_record r;
	bool did;
	char *path = xasprintf("%s/jfab.journal", w->dir);

	some_state(&before, 1);
	some_state(&target, 5);
	assert_int_equal(
	    record_write(w->c, 8, &before,
			 &(struct txn_meta){"ring:16", "j.yaml", NULL, false, NULL, 0, true}, &err),
	    0);
	/* What an older ofc wrote: topology and config, no version. */
	Ofc__V1__Journal m = OFC__V1__JOURNAL__INIT;
	Ofc__V1__DeviceRecord b = OFC__V1__DEVICE_RECORD__INIT, t = OFC__V1__DEVICE_RECORD__INIT;
	Ofc__V1__DeviceRecord *bp = &b, *tp = &t;
	uint32_t bx[16], tx[16];
	for (uint32_t i = 0; i < 8; i++) {
		bx[2 * i] = before.xc[i].in;
		bx[2 * i + 1] = before.xc[i].out;
		tx[2 * i] = target.xc[i].in;
		tx[2 * i + 1] = target.xc[i].out;
	}
	b.name = t.name = "ocs0";
	b.driver = t.driver = "sim";
	b.n_xconn = t.n_xconn = 16;
	b.xconn = bx;
	t.xconn = tx;
	m.has_id = m.has_phase = true;
	m.id = 9;
	m.phase = OFC__V1__JOURNAL__PHASE__PHASE_APPLYING;
	m.fabric = "jfab";
	m.config = "j.yaml";
	m.topology = "ring:16";
	m.n_before = m.n_target = 1;
	m.before = &bp;
	m.target = &tp;
	size_t len = ofc__v1__journal__get_packed_size(&m);
	uint8_t *old = xmalloc(len);
	ofc__v1__journal__pack(&m, old);
	write_file(w->dir, "jfab.journal", old, len);

	/* Every device at the target: it would be committed. Refused. */
	device_holds(w, &target);
	assert_int_equal(ctl_recover(w->c, &did, &err), -1);
	assert_string_equal(err.file, path);
	assert_non_null(strstr(err.msg, "written by an older ofc"));
	char *mv = xasprintf("mv '%s' '%s.old'", path, path);
	assert_non_null(strstr(err.msg, mv));
	free(mv);
	size_t now_len;
	char *now = slurp(w->dir, "jfab.journal", &now_len);
	assert_int_equal(now_len, len);
	assert_memory_equal(now, old, len);
	free(now);
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_int_equal(r.generation, 8);
	assert_true(state_equal(&r.dev_states[0], &before));
	ctl_record_free(&r);
	assert_int_equal(ctl_read(w->c, &err), 0);
	assert_true(state_equal(&w->c->devs[0].actual, &target));

	/* Half-way (one more cross-connect than before): undone, as any
	 * journal, to the record before. */
	struct device_state half;
	some_state(&half, 1);
	state_add_xconn(&half, 20, 21);
	state_sort(&half);
	device_holds(w, &half);
	state_free(&half);
	assert_int_equal(ctl_recover(w->c, &did, &err), 0);
	assert_true(did);
	assert_int_equal(ctl_read(w->c, &err), 0);
	assert_true(state_equal(&w->c->devs[0].actual, &before));
	assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), 0);
	assert_false(r.have_journal);
	assert_int_equal(r.generation, 8);
	ctl_record_free(&r);
	free(old);
	free(path);
	state_free(&before);
	state_free(&target);
}

/* Moved ports that cannot be a re-wiring are damage: a port moved onto
 * itself, a port in two moves, no host. */
static void test_damaged_moves(void **state)
{
	struct world *w = *state;
	struct device_state s;
	struct ctl_record r;
	struct ofc_error err = {0};
	struct port_move self[] = {{"h1", 2, 2}}, twice[] = {{"h1", 0, 2}, {"h1", 3, 0}},
			 nameless[] = {{"", 0, 1}}, spaced[] = {{"h 1", 0, 1}};
	const struct {
		struct port_move *m;
		uint32_t n;
		const char *why;
	} bad[] = {
	    {self, 1, "moved port 1 is not a host name and two different ports"},
	    {twice, 2, "port h1:0 is in two moves"},
	    {nameless, 1, "moved port 1 is not a host name and two different ports"},
	    {spaced, 1, "moved port 1 is not a host name and two different ports"},
	};

	some_state(&s, 3);
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		assert_int_equal(record_write(w->c, 5, &s,
					      &(struct txn_meta){"ring:16", "j.yaml", NULL, false,
								 bad[i].m, bad[i].n, true},
					      &err),
				 0);
		assert_int_equal(ctl_load_record(w->dir, "jfab", &r, &err), -1);
		if (!strstr(err.msg, bad[i].why) || !strstr(err.msg, "mv '"))
			fail_msg("case %zu: %s", i, err.msg);
		ofc_error_clear(&err);
	}
	state_free(&s);
}

static void test_phase_names(void **state)
{
	(void)state;
	assert_string_equal(journal_phase_name(JOURNAL_APPLYING), "applying");
	assert_string_equal(journal_phase_name(JOURNAL_ROLLING_BACK), "rolling-back");
	assert_string_equal(journal_phase_name(JOURNAL_COMMITTING), "committing");
	assert_string_equal(journal_phase_name((enum journal_phase)99), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_record_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_record_ids_and_topology, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_journal_round_trip, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_files_refused, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_state_stops_changes, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_record_ports_checked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_principal_recorded, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_journal_values_checked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_repair_keeps_direction, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_old_journal, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_damaged_moves, setup, teardown),
	    cmocka_unit_test(test_phase_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
