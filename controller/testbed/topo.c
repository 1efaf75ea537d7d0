/* A testbed's fabric with another topology: what `ofc testbed run` and
 * ofcd's TestbedRun schedule for when the committed topology is not the
 * config's, or for a what-if (--topology). Only the fabric's own
 * functions: which topology was committed is the caller's to read (the
 * record is controller/reconfig's, which calls this module). */
#include "controller/testbed/testbed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int testbed_topo_open(const struct fabric *f, const char *spec, struct testbed_topo *w,
		      struct ofc_error *err)
{
	uint32_t least = UINT32_MAX;

	memset(w, 0, sizeof(*w));
	snprintf(w->spec, sizeof(w->spec), "%s", spec);
	if (fabric_topo_build(f, spec, &w->g, err) < 0)
		return -1;
	for (uint32_t h = 0; h < f->nhosts; h++)
		least = f->hosts[h].ports < least ? f->hosts[h].ports : least;
	if (w->g->n != f->nhosts) {
		ofc_error_set(err, OFC_E_INPUT, "%s has %u nodes, the fabric %u hosts", w->spec,
			      w->g->n, f->nhosts);
		goto fail;
	}
	if (topo_ports(w->g, &w->pm, err) < 0)
		goto fail;
	if (w->pm.d > least) {
		ofc_error_set(err, OFC_E_INPUT, "%s needs %u ports a host, the hosts have %u",
			      w->spec, w->pm.d, least);
		goto fail;
	}
	/* f with this topology, as a config naming it gets it (the shallow
	 * copy ofc plan --horizon prices its candidates on): f's hosts,
	 * switches and wiring, this graph, its ports and circuits. */
	w->f = *f;
	w->f.graph = w->g;
	w->f.degraded = NULL;
	w->f.nfailed_hosts = 0;
	w->f.ports = w->pm;
	w->f.circuits = NULL;
	w->f.ncircuits = 0;
	w->f.topology.spec = w->spec;
	w->f.topology.nfailed_links = 0;
	w->f.topology.nfailed_hosts = 0;
	topo_facts(w->g, &w->f.facts, 1);
	if (fabric_circuits(&w->f, err) < 0)
		goto fail;
	w->open = true;
	return 0;
fail:
	testbed_topo_free(w);
	return -1;
}

void testbed_topo_free(struct testbed_topo *w)
{
	if (w->f.circuits)
		free(w->f.circuits);
	if (w->g)
		graph_free(w->g);
	port_map_free(&w->pm);
	memset(w, 0, sizeof(*w));
}
