/* `ofc status FILE --json`: the state as ofc.v1.State, the message ofcd
 * answers GetState with and `ofc --socket PATH status --json` prints, so a
 * script reads one shape either way (docs/json.md). Built from
 * what this process read: each device as it is now, the record, the
 * journal. */
#include "controller/cli/internal.h"
#include "controller/export/export.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const struct device_state *recorded(const struct ctl_record *r, const char *name)
{
	for (uint32_t k = 0; k < r->ndevs; k++)
		if (strcmp(r->dev_names[k], name) == 0)
			return &r->dev_states[k];
	return NULL;
}

/* The journal a transaction left: running (its process holds the lock) or
 * unfinished, as ofcd words it. */
static Ofc__V1__TransactionInfo *journal_msg(struct arena *a, const struct ctl_record *r)
{
	Ofc__V1__TransactionInfo *t = arena_alloc(a, sizeof(*t));

	ofc__v1__transaction_info__init(t);
	t->has_id = 1;
	t->id = r->journal_id;
	t->state = r->journal_owner_alive ? arena_strdup(a, r->journal_phase)
					  : arena_printf(a, "unfinished (%s)", r->journal_phase);
	t->has_running = 1;
	t->running = r->journal_owner_alive;
	if (r->journal_pid) {
		t->has_peer_pid = 1;
		t->peer_pid = r->journal_pid;
	}
	if (r->journal_principal)
		t->principal = arena_strdup(a, r->journal_principal);
	if (r->trial_deadline > 0) {
		t->has_trial_deadline_unix = 1;
		t->trial_deadline_unix = r->trial_deadline;
	}
	return t;
}

/* The record's half of the state: generation, time, config, partition,
 * the committed topology (kept alive in *own and *ports). */
static void record_fields(struct arena *a, const struct fabric *f, const struct ctl_record *r,
			  Ofc__V1__State *st, struct graph **own, struct port_map *ports)
{
	const struct graph *g;
	const struct port_map *pm;
	struct topo_facts facts;

	st->has_config_generation = 1;
	st->config_generation = r->have_state ? r->generation : 0;
	if (!r->have_state)
		return;
	st->has_committed_unix_ms = 1;
	st->committed_unix_ms = r->time_unix_ms;
	st->recorded_config = arena_strdup(a, r->config);
	if (r->partition)
		st->partition = arena_strdup(a, r->partition);
	if (r->replica)
		st->committed_by = arena_strdup(a, r->replica);
	if (r->principal)
		st->committed_principal = arena_strdup(a, r->principal);
	st->has_committed_epoch = r->epoch != 0;
	st->committed_epoch = r->epoch;
	/* The fabric's, as ofcd shows it: a partition's commit leaves it (an
	 * older record that does not say: the config's). */
	const char *spec = r->fabric_topology	 ? r->fabric_topology
			   : f->topology.present ? f->topology.spec
						 : NULL;
	if (recorded_topology(f, spec, &g, &facts, &pm, own, ports))
		st->topology = topology_msg(a, g, &facts, pm, false);
}

void status_write_json(const struct fabric_cmd *fc, const struct ctl_record *r, FILE *out)
{
	const struct fabric *f = fc->fabric;
	struct arena a = {0};
	struct graph *own = NULL;
	struct port_map ports = {0};
	struct stat sb;
	char config[PATH_MAX];
	bool in_sync = true, at_target = true;
	Ofc__V1__State *st = arena_alloc(&a, sizeof(*st));

	ofc__v1__state__init(st);
	st->fabric_name = f->name;
	/* absolute, as ofcd keeps its --config */
	st->config_file = realpath(fc->file, config) ? config : (char *)fc->file;
	if (f->topology.present)
		st->target_topology = f->topology.spec;
	st->state_dir = (char *)fc->state_dir;
	st->has_state_dir_exists = 1;
	st->state_dir_exists = stat(fc->state_dir, &sb) == 0 && S_ISDIR(sb.st_mode);
	st->has_testbed_up = 1;
	st->testbed_up = testbed_is_up(fc->state_dir, f->name);
	record_fields(&a, f, r, st, &own, &ports);
	if (r->have_journal)
		st->transaction = journal_msg(&a, r);
	st->devices = arena_array(&a, fc->ctl->ndevs, sizeof(*st->devices));
	for (uint32_t i = 0; i < fc->ctl->ndevs; i++) {
		const struct ctl_device *cd = &fc->ctl->devs[i];
		const struct device_state *rec = recorded(r, cd->cfg.name);
		Ofc__V1__DeviceState *m =
		    device_state_msg(&a, f, &cd->cfg, cd->read_ok ? &cd->actual : NULL);

		m->has_reachable = m->has_in_sync = m->has_at_target = 1;
		m->reachable = cd->read_ok;
		if (!cd->read_ok)
			m->error = (char *)cd->read_err.msg;
		else
			device_alarms_msg(&a, f, &cd->dev, m);
		m->in_sync = cd->read_ok && state_as_recorded(rec, &cd->actual);
		m->at_target = cd->read_ok && state_equal(&cd->target, &cd->actual);
		in_sync &= m->in_sync;
		at_target &= m->at_target;
		st->devices[st->n_devices++] = m;
	}
	st->has_in_sync = st->has_at_target = 1;
	st->in_sync = in_sync;
	st->at_target = at_target;

	struct json_writer w;
	jw_init(&w, out, true);
	pb_write_json(&w, &st->base);
	jw_finish(&w);
	arena_free(&a);
	graph_free(own);
	port_map_free(&ports);
}

/* A fabric with a switch lost has 256 failed ports: one line of them all
 * was unreadable; --json lists every one. */
void print_status_items(const char *label, char *const *v, size_t n, bool kinds, const char *noun,
			const char *tail)
{
	enum { ALL = 8, FIRST = 6 };
	size_t links = 0, ports = 0, hosts = 0;

	printf("  %-10s", label);
	if (n > ALL) {
		for (size_t i = 0; i < n; i++) {
			links += strchr(v[i], '-') != NULL;
			ports += !strchr(v[i], '-') && strchr(v[i], ':') != NULL;
		}
		hosts = n - links - ports;
		if (!kinds)
			printf(" %zu %s:", n, noun);
		else if (links == n || ports == n || hosts == n)
			printf(" %zu %s:", n,
			       links == n   ? "links"
			       : ports == n ? "ports"
					    : "hosts");
		else
			printf(" %zu (%zu link%s, %zu port%s, %zu host%s):", n, links,
			       links == 1 ? "" : "s", ports, ports == 1 ? "" : "s", hosts,
			       hosts == 1 ? "" : "s");
	}
	for (size_t i = 0; i < n && (n <= ALL || i < FIRST); i++)
		printf(" %s", v[i]);
	if (n > ALL)
		printf(" ... and %zu more", n - FIRST);
	printf(" (%s)\n", tail);
}

void print_port_alarms(const Ofc__V1__PortAlarm *const *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		printf("    port alarm: %s %u ", a[i]->side ? a[i]->side : "?", a[i]->port);
		if (a[i]->has_power_dbm)
			printf("at %.2f dBm, under min_power", a[i]->power_dbm);
		else
			printf("FAILED");
		if (a[i]->host_port)
			printf(" (%s)", a[i]->host_port);
		printf("\n");
	}
}
