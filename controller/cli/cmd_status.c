/* ofc status [FILE]: the recorded state, any unfinished transaction and,
 * with FILE, what every device holds now and whether that agrees with the
 * record and with the config's target. Status only reads: it takes no lock
 * and repairs nothing, so it can show a transaction a crash left behind. */
#include "controller/cli/internal.h"
#include "proto/cli_report.pb-c.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Status only reads, so a state directory that is not there stays so; it
 * is said, since a mistyped --state-dir otherwise reads as a fabric that
 * never committed anything. */
static bool dir_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The fabric's record as --all --json lists it (in a). */
static Ofc__V1__RecordedFabric *recorded(struct arena *a, const char *state_dir, const char *name,
					 const struct ctl_record *r, const char *topo)
{
	Ofc__V1__RecordedFabric *m = arena_alloc(a, sizeof(*m));
	Ofc__V1__RecordTransaction *t;

	ofc__v1__recorded_fabric__init(m);
	m->fabric = arena_strdup(a, name);
	m->has_generation = m->has_testbed_up = 1;
	m->generation = r->generation;
	m->config = arena_strdup(a, r->config ? r->config : "");
	m->topology = arena_strdup(a, topo ? topo : "");
	m->testbed_up = testbed_is_up(state_dir, name);
	if (!r->have_journal)
		return m;
	m->transaction = t = arena_alloc(a, sizeof(*t));
	ofc__v1__record_transaction__init(t);
	t->has_id = t->has_pid = t->has_running = 1;
	t->id = r->journal_id;
	t->phase = arena_strdup(a, r->journal_phase ? r->journal_phase : "");
	t->pid = r->journal_pid;
	t->running = r->journal_owner_alive;
	if (r->trial_deadline > 0) {
		t->has_trial_deadline_unix = 1;
		t->trial_deadline_unix = r->trial_deadline;
	}
	return m;
}

static void text_txn(const struct ctl_record *r)
{
	if (!r->have_journal) {
		printf("  no unfinished transaction\n");
		return;
	}
	printf("  transaction %llu: %s%s%s, %s\n", (unsigned long long)r->journal_id,
	       r->journal_phase, r->journal_principal ? ", asked for by " : "",
	       r->journal_principal ? r->journal_principal : "",
	       r->journal_owner_alive
		   ? "in progress"
		   : "UNFINISHED (its process is gone): the next plan, apply, try or "
		     "testbed command repairs it");
}

static int status_all(struct fabric_cmd *fc)
{
	struct ofc_error err = {0};
	Ofc__V1__RecordedFabrics all = OFC__V1__RECORDED_FABRICS__INIT;
	struct arena a = {0};
	char **names;
	uint32_t n;

	bool exists = dir_exists(fc->state_dir);

	if (ctl_list_fabrics(fc->state_dir, &names, &n, &err) < 0)
		return fabric_cmd_fail(fc, &err);
	all.state_dir = fc->state_dir;
	all.has_state_dir_exists = 1;
	all.state_dir_exists = exists;
	all.fabrics = arena_array(&a, n + 1, sizeof(*all.fabrics));
	if (!fc->json && !exists)
		printf("state directory %s does not exist: nothing recorded (ofc apply creates "
		       "it)\n",
		       fc->state_dir);
	else if (!fc->json)
		printf("state directory %s: %u fabric%s\n", fc->state_dir, n, n == 1 ? "" : "s");
	for (uint32_t i = 0; i < n; i++) {
		struct ctl_record r;
		const char *topo;

		if (ctl_load_record(fc->state_dir, names[i], &r, &err) < 0) {
			char buf[700];

			fprintf(stderr, "ofc: %s\n", ofc_error_str(&err, buf, sizeof(buf)));
			continue;
		}
		/* the fabric's (a partition's commit leaves it) */
		topo = r.fabric_topology ? r.fabric_topology : r.topology;
		if (fc->json) {
			all.fabrics[all.n_fabrics++] =
			    recorded(&a, fc->state_dir, names[i], &r, topo);
		} else {
			printf("%s: generation %llu, config %s, topology %s%s\n", names[i],
			       (unsigned long long)r.generation, r.config ? r.config : "-",
			       topo && *topo ? topo : "-",
			       testbed_is_up(fc->state_dir, names[i]) ? ", testbed up" : "");
			text_txn(&r);
		}
		ctl_record_free(&r);
		free(names[i]);
	}
	free(names);
	if (fc->json)
		cli_print_message(stdout, &all.base);
	arena_free(&a);
	fabric_cmd_free(fc);
	return 0;
}

/* --dot: each switch's circuits as it holds them (read now, else as
 * recorded), host port to host port through the wiring, drawn as `ofc
 * show --dot` draws the target's (controller/export/dot.c), the target's
 * it lacks dotted. */
static int status_dot(struct fabric_cmd *fc, const struct ctl_record *r)
{
	const struct fabric *f = fc->fabric;
	struct circuit *have = NULL, *miss = NULL;
	uint32_t nhave = 0, nmiss = 0, nlost = 0;
	bool *lost = xcalloc(f->nswitches + 1, sizeof(bool));

	for (uint32_t s = 0; s < f->nswitches; s++) {
		const struct fswitch *sw = &f->switches[s];
		const struct device_state *st = NULL;
		/* switch port -> wiring entry (UINT32_MAX: none) */
		uint32_t *at = xmalloc(((size_t)sw->ports + 2) * sizeof(uint32_t));

		for (uint32_t i = 0; i <= sw->ports + 1; i++)
			at[i] = UINT32_MAX;
		for (uint32_t i = 0; i < f->nwiring; i++)
			if (f->wiring[i].sw == s && f->wiring[i].sw_port <= sw->ports)
				at[f->wiring[i].sw_port] = i;
		for (uint32_t i = 0; i < fc->ctl->ndevs; i++)
			if (strcmp(fc->ctl->devs[i].cfg.name, sw->name) == 0) {
				lost[s] = !fc->ctl->devs[i].read_ok;
				st = lost[s] ? NULL : &fc->ctl->devs[i].actual;
			}
		for (uint32_t k = 0; !st && k < r->ndevs; k++)
			if (strcmp(r->dev_names[k], sw->name) == 0)
				st = &r->dev_states[k];
		nlost += lost[s];
		for (uint32_t k = 0; st && k < st->nxc; k++) {
			struct xconn x = st->xc[k];

			if (x.in > sw->ports || x.out > sw->ports || at[x.in] == UINT32_MAX ||
			    at[x.out] == UINT32_MAX)
				continue; /* a port no host is cabled to */
			have = xrealloc(have, (nhave + 1) * sizeof(*have));
			have[nhave++] = (struct circuit){s,
							 x.in,
							 x.out,
							 f->wiring[at[x.in]].host,
							 f->wiring[at[x.in]].host_port,
							 f->wiring[at[x.out]].host,
							 f->wiring[at[x.out]].host_port};
		}
		free(at);
	}
	for (uint32_t i = 0; i < f->ncircuits; i++) {
		const struct circuit *c = &f->circuits[i];
		bool found = false;

		for (uint32_t k = 0; k < nhave && !found; k++)
			found = have[k].sw == c->sw && have[k].in_port == c->in_port &&
				have[k].out_port == c->out_port;
		if (!found) {
			miss = xrealloc(miss, (nmiss + 1) * sizeof(*miss));
			miss[nmiss++] = *c;
		}
	}
	struct fabric_dot d = {.circuits = have,
			       .ncircuits = nhave,
			       .missing = miss,
			       .nmissing = nmiss,
			       .what = nlost ? "as read, or recorded where a device did not answer"
					     : "as the devices hold them",
			       .unreachable = lost};

	fabric_write_dot_circuits(f, &d, stdout);
	free(have);
	free(miss);
	free(lost);
	return nlost ? 1 : 0;
}

static const struct opt dot_rows[] = {
    {"dot", NULL, offsetof(struct fabric_cmd, dot), NULL,
     "with FILE: the circuits the switches hold, for Graphviz (dot -Tpng), failures in red, "
     "the target's missing ones dotted, a partition per colour",
     .alt = CLI_ALT_JSON},
    {NULL},
};

const struct cli_table status_cli_table = {"status", dot_rows, sizeof(struct fabric_cmd)};

int cmd_status(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct fabric_cmd fc;
	struct ofc_error err = {0};
	struct ctl_record r;
	bool all_reachable = true;
	int rc =
	    fabric_cmd_parse(&fc, cmd, argc, argv, (const struct opt *const[]){dot_rows, NULL},
			     "Without FILE: every fabric in the state directory, its recorded "
			     "state and any\nunfinished transaction. With FILE: also each "
			     "device's live state, whether it\nagrees with the record (in_sync) "
			     "and with the config (at_target). Exit 1 when a\ndevice cannot be "
			     "read. Status never changes anything.\n",
			     true);

	if (rc)
		return rc < 0 ? 0 : rc;
	fc.reads_only = true;
	if (fc.dot && (fc.json || !fc.file)) {
		const char *why =
		    fc.json ? "--dot or --json, not both" : "--dot needs the fabric's FILE";

		fabric_cmd_free(&fc);
		return cli_usage_error(cmd, "%s", why);
	}
	if (!fc.file)
		return status_all(&fc);
	if (fabric_cmd_open(&fc, true, &err) < 0 || ctl_load_record_for(fc.ctl, &r, &err) < 0)
		return fabric_cmd_fail(&fc, &err);
	ctl_read(fc.ctl, &err);
	if (fc.dot) {
		rc = status_dot(&fc, &r);
		ctl_record_free(&r);
		fabric_cmd_free(&fc);
		return rc;
	}

	if (fc.json) {
		/* ofc.v1.State, as ofcd answers (status_json.c) */
		status_write_json(&fc, &r, stdout);
		for (uint32_t i = 0; i < fc.ctl->ndevs; i++)
			all_reachable &= fc.ctl->devs[i].read_ok;
	} else {
		if (dir_exists(fc.state_dir))
			printf("fabric %s (state in %s)\n", fc.fabric->name, fc.state_dir);
		else
			printf("fabric %s (state directory %s does not exist: nothing recorded; "
			       "ofc apply creates it)\n",
			       fc.fabric->name, fc.state_dir);
		/* the fabric's topology, then the partition the last commit
		 * changed (its own topology) */
		if (r.have_state)
			printf(
			    "  recorded: generation %llu, topology %s, from %s%s%s%s%s%s%s%s%s\n",
			    (unsigned long long)r.generation,
			    r.fabric_topology && *r.fabric_topology ? r.fabric_topology
			    : r.fabric_topology			    ? "-"
								    : "(not recorded)",
			    r.config, r.partition ? "; the last commit was partition " : "",
			    r.partition ? r.partition : "", r.partition ? "'s, to " : "",
			    r.partition ? r.topology : "", r.replica ? ", by replica " : "",
			    r.replica ? r.replica : "", r.principal ? ", asked for by " : "",
			    r.principal ? r.principal : "");
		else
			printf("  recorded: nothing yet (no transaction has committed)\n");
		text_txn(&r);
	}
	for (uint32_t i = 0; i < fc.ctl->ndevs && !fc.json; i++) {
		const struct ctl_device *cd = &fc.ctl->devs[i];
		const struct device_state *rec = NULL;
		bool sync, target;

		for (uint32_t k = 0; k < r.ndevs; k++)
			if (strcmp(r.dev_names[k], cd->cfg.name) == 0)
				rec = &r.dev_states[k];
		sync = cd->read_ok && state_as_recorded(rec, &cd->actual);
		target = cd->read_ok && state_equal(&cd->target, &cd->actual);
		all_reachable &= cd->read_ok;
		if (!cd->read_ok) {
			printf("  %s (%s): UNREACHABLE: %s\n", cd->cfg.name, cd->cfg.driver,
			       cd->read_err.msg);
		} else {
			printf("  %s (%s%s%s): %u entr%s; %s; %s the config's target\n",
			       cd->cfg.name, cd->cfg.driver, cd->cfg.address ? " at " : "",
			       cd->cfg.address ? cd->cfg.address : "", state_size(&cd->actual),
			       state_size(&cd->actual) == 1 ? "y" : "ies",
			       rec && sync ? "matches the record"
			       : sync	   ? "nothing recorded for it yet, and it holds nothing"
			       : rec	   ? "DIFFERS FROM the record"
					   : "nothing recorded for it yet",
			       target ? "at" : "not at");
			struct arena a = {0};
			Ofc__V1__DeviceState m = OFC__V1__DEVICE_STATE__INIT;

			device_alarms_msg(&a, fc.fabric, &cd->dev, &m);
			print_port_alarms((const Ofc__V1__PortAlarm *const *)m.port_alarms,
					  m.n_port_alarms);
			arena_free(&a);
		}
	}
	ctl_record_free(&r);
	fabric_cmd_free(&fc);
	return all_reachable ? 0 : 1;
}

/* The rule `ofc status FILE` applies above (every device answered, else 1),
 * on the state ofcd sends: a device it marks unreachable. */
int status_devices_exit(const Ofc__V1__State *s)
{
	for (size_t i = 0; i < s->n_devices; i++)
		if (s->devices[i]->has_reachable && !s->devices[i]->reachable)
			return 1;
	return 0;
}
