/* A run-time partition's renumbering planned ahead, in the planner process
 * (planner_serve.c hands it the job ofcd's plan_ahead.c sends through
 * planner_relabel, planner_ask.c): the partition made as held_make makes
 * it (the holds are the worker's, at the commit), its members renumbered
 * for the fewest moves on the cross-connects the switches held when ofcd
 * published the plan's base, as ctl_partition renumbers it. */
#include "controller/ofcd/internal.h"
#include "proto/planner.pb-c.h"

#include <stdlib.h>
#include <string.h>

/* The switches' cross-connects as the job carries them, one a switch of
 * f (NULL where unknown); *states holds them (the caller frees both). */
static const struct device_state **switch_states(const struct fabric *f,
						 const Ofc__V1__PlannerJob *m,
						 struct device_state **states,
						 struct ofc_error *err)
{
	const struct device_state **actual = xcalloc((size_t)f->nswitches + 1, sizeof(*actual));

	*states = xcalloc((size_t)f->nswitches + 1, sizeof(**states));
	if (m->n_switches != f->nswitches) {
		ofc_error_set(err, OFC_E_INPUT,
			      "the job holds %zu switches' states; the fabric has %u",
			      m->n_switches, f->nswitches);
		return actual;
	}
	for (uint32_t s = 0; s < f->nswitches; s++) {
		const Ofc__V1__PlannerSwitch *w = m->switches[s];

		state_init(&(*states)[s], DEV_SWITCH);
		for (size_t k = 0; k + 1 < w->n_xc; k += 2)
			state_add_xconn(&(*states)[s], w->xc[k], w->xc[k + 1]);
		actual[s] = w->known ? &(*states)[s] : NULL;
	}
	return actual;
}

static void report_into(const struct fabric_relabel *r, Ofc__V1__PlannerRelabel *a)
{
	a->has_arcs = a->has_kept_identity = a->has_kept = a->has_kept_links = 1;
	a->arcs = r->arcs;
	a->kept_identity = r->kept_identity;
	a->kept = r->kept;
	a->kept_links = r->kept_links;
	a->has_moved_nodes = a->has_changed = a->has_complete = a->has_optimal = 1;
	a->moved_nodes = r->moved_nodes;
	a->changed = r->changed;
	a->complete = r->complete;
	a->optimal = r->optimal;
	a->has_deadline = a->has_rounds = a->has_seconds = 1;
	a->deadline = r->deadline;
	a->rounds = r->rounds;
	a->seconds = r->seconds;
}

uint8_t *planner_relabel_compute(const struct fabcfg *cfg, const struct topo_files *files,
				 const Ofc__V1__PlannerJob *m, const volatile int32_t *cut_us,
				 size_t *len)
{
	Ofc__V1__PlannerRelabel a = OFC__V1__PLANNER_RELABEL__INIT;
	const struct fabric *f = cfg->f;
	struct relabel_opts o = {.budget_s = m->budget, .cut_us = cut_us};
	struct ofc_error err = {0};
	struct device_state *states;
	const struct device_state **actual = switch_states(f, m, &states, &err);
	struct fabric_relabel rep = {0};
	struct circuit *pc = NULL;
	uint32_t npc = 0;
	struct partition p;
	uint8_t *buf;

	a.has_ok = 1;
	if (!err.msg[0] &&
	    held_make_in(files, f, m->name ? m->name : "", m->hosts, (uint32_t)m->n_hosts,
			 m->topology ? m->topology : "", &p, &err) == 0) {
		a.ok = partition_relabel(f, &p, NULL, actual, &o, &pc, &npc, &rep, &err) == 0;
		held_partition_free(&p);
	}
	if (a.ok) {
		report_into(&rep, &a);
		a.n_circuits = (size_t)npc * 7;
		a.circuits = xcalloc(a.n_circuits + 1, sizeof(*a.circuits));
		for (uint32_t i = 0; i < npc; i++)
			memcpy(&a.circuits[(size_t)i * 7],
			       (uint32_t[]){pc[i].sw, pc[i].in_port, pc[i].out_port, pc[i].src_host,
					    pc[i].src_port, pc[i].dst_host, pc[i].dst_port},
			       7 * sizeof(uint32_t));
	} else {
		a.why = err.msg;
	}
	*len = protobuf_c_message_get_packed_size(&a.base);
	buf = xmalloc(*len ? *len : 1);
	protobuf_c_message_pack(&a.base, buf);
	free(a.circuits);
	free(pc);
	for (uint32_t s = 0; s < f->nswitches; s++)
		state_free(&states[s]);
	free(states);
	free(actual);
	return buf;
}
