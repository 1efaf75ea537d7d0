/* The topology a testbed run schedules for: the one committed (the
 * record's, when a transaction applied another than the file names), or
 * a what-if (`testbed run --topology SPEC`: applied for the run, the one
 * before applied again after), so that a script neither plans for a
 * file's old topology after a reconfiguration nor writes a second file to
 * try another. */
#include "controller/cli/internal.h"

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

int testbed_topo_committed(const struct fabric_cmd *fc, struct testbed_topo *w,
			   struct ofc_error *err)
{
	const struct fabric *f = fc->fabric;
	struct ctl_record r;
	const char *spec;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (ctl_load_record(fc->state_dir, f->name, &r, err) < 0)
		return -1;
	spec = r.fabric_topology ? r.fabric_topology : r.topology;
	/* A renumbered topology or a partition's commit is not a spec alone:
	 * the file's topology then, and the run refuses a schedule whose
	 * ports reach other hosts than the circuits do. */
	if (r.have_state && spec && spec[0] && !r.relabelled && !r.partition &&
	    (!f->topology.spec || strcmp(spec, f->topology.spec) != 0))
		rc = testbed_topo_open(f, spec, w, err);
	ctl_record_free(&r);
	return rc;
}

int testbed_topo_apply(const struct fabric_cmd *fc, struct fabric *f, struct ofc_error *err)
{
	struct ctl_opts o = {.state_dir = fc->state_dir,
			     .overrides = (const char *const *)fc->overrides,
			     .noverrides = fc->noverrides};
	struct reconfigure_req q = {.lock = true, .recover = true, .skip_empty = true};
	struct reconfigure_result r;
	struct ctl *ctl;
	int rc;

	if (ctl_open(f, &o, &ctl, err) < 0)
		return -1;
	q.ctl = ctl;
	rc = reconfigure_run(&q, &r, err);
	reconfigure_result_free(&r);
	ctl_close(ctl);
	return rc;
}
