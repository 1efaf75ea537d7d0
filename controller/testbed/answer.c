/* The testbed's results as the ofc.v1 messages (proto/control.proto) that
 * ofcd answers and the CLI's local --json prints, so a script reads one
 * shape whether it asked the daemon or ran the command itself. */
#include "controller/testbed/testbed.h"
#include "proto/control.pb-c.h"

Ofc__V1__TestbedUpAnswer *testbed_up_answer(struct arena *a, const char *fabric,
					    const struct testbed_up_result *r)
{
	Ofc__V1__TestbedUpAnswer *m = arena_alloc(a, sizeof(*m));

	ofc__v1__testbed_up_answer__init(m);
	m->fabric = arena_strdup(a, fabric);
	m->has_hosts = m->has_circuits = m->has_rate_bps = m->has_carried_bps = 1;
	m->has_rate_scale = 1;
	m->hosts = r->hosts;
	m->circuits = r->circuits;
	m->rate_bps = r->rate;
	m->carried_bps = r->carried;
	m->rate_scale = r->rate_scale;
	m->notes = arena_array(a, r->nnotes + 1, sizeof(*m->notes));
	for (uint32_t i = 0; i < r->nnotes; i++)
		m->notes[m->n_notes++] = arena_strdup(a, r->notes[i]);
	return m;
}
