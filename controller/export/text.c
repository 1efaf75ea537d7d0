/* A fabric as a person reads it (`ofc show`). */
#include "controller/export/export.h"

#include <string.h>

static void driver_line(FILE *out, const struct driver_cfg *d)
{
	if (!d->present) {
		fprintf(out, "no driver (modelled only)");
		return;
	}
	fprintf(out, "driver %s", d->type);
	if (d->dialect == TL1_CALIENT)
		fprintf(out, " (Calient dialect, port k = %u.%u+(k-1)/%u.(k-1)%%%u+1)",
			d->port_map.shelf, d->port_map.first_slot, d->port_map.slot_ports,
			d->port_map.slot_ports);
	if (d->address)
		fprintf(out, " at %s", d->address);
	if (d->credentials)
		fprintf(out, ", credentials %s", d->credentials);
	if (d->known_hosts)
		fprintf(out, ", known hosts %s", d->known_hosts);
	if (d->transport == NETCONF_TLS)
		fprintf(out, ", TLS (CA %s%s%s)", d->tls_ca,
			d->tls_server_name ? ", server name " : "",
			d->tls_server_name ? d->tls_server_name : "");
	if (d->datastore)
		fprintf(out, ", %s datastore",
			d->datastore == NETCONF_DS_CANDIDATE ? "candidate" : "running");
	if (d->min_power_set)
		fprintf(out, ", ports in use below %g dBm fail", d->min_power);
}

/* "h0..h63" when names are generated, else the first few. */
static void host_names(FILE *out, const struct fabric *f)
{
	if (f->hosts_generated || f->nhosts > 6) {
		fprintf(out, "%s..%s", f->hosts[0].name, f->hosts[f->nhosts - 1].name);
		return;
	}
	for (uint32_t i = 0; i < f->nhosts; i++)
		fprintf(out, "%s%s", i ? ", " : "", f->hosts[i].name);
}

static void write_hosts(const struct fabric *f, FILE *out)
{
	uint32_t pmin = UINT32_MAX, pmax = 0;
	uint64_t ports = 0;
	char a[48];

	for (uint32_t i = 0; i < f->nhosts; i++) {
		pmin = f->hosts[i].ports < pmin ? f->hosts[i].ports : pmin;
		pmax = f->hosts[i].ports > pmax ? f->hosts[i].ports : pmax;
		ports += f->hosts[i].ports;
	}
	fprintf(out, "\nhosts: %u (", f->nhosts);
	host_names(out, f);
	if (pmin == pmax)
		fprintf(out, "), %u port%s each", pmin, pmin == 1 ? "" : "s");
	else
		fprintf(out, "), %u to %u ports, %llu in all", pmin, pmax,
			(unsigned long long)ports);
	if (f->hosts[0].port_rate > 0) {
		fmt_rate(a, sizeof(a), f->hosts[0].port_rate);
		fprintf(out, " at %s", a);
	}
	fprintf(out, "\n");
}

/* "8 GPUs, 5 switches, 1 memory, 8 NICs" */
static void vertex_counts(FILE *out, const struct sv_vertex *v, uint32_t n)
{
	static const char *const one[] = {"GPU", "memory", "switch", "NIC"};
	static const char *const many[] = {"GPUs", "memories", "switches", "NICs"};
	uint32_t c[4] = {0};
	bool first = true;

	for (uint32_t i = 0; i < n; i++)
		c[v[i].kind]++;
	for (unsigned k = 0; k < 4; k++)
		if (c[k]) {
			fprintf(out, "%s%u %s", first ? "" : ", ", c[k],
				c[k] == 1 ? one[k] : many[k]);
			first = false;
		}
	if (first)
		fprintf(out, "no vertices");
}

/* "28 links: 8 x 300 GB/s, 20 x 32 GB/s" (by bandwidth per direction, in
 * the order first met; one-way links said so) */
static void link_counts(FILE *out, const struct sv_link *l, uint32_t n)
{
	uint32_t oneway = 0;

	fprintf(out, "%u link%s", n, n == 1 ? "" : "s");
	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = 0;
		bool seen = false;

		oneway += l[i].one_way;
		for (uint32_t j = 0; j < i && !seen; j++)
			seen = l[j].bandwidth == l[i].bandwidth;
		if (seen)
			continue;
		for (uint32_t j = i; j < n; j++)
			c += l[j].bandwidth == l[i].bandwidth;
		fprintf(out, "%s%u x %g GB/s", i ? ", " : ": ", c, l[i].bandwidth / 8e9);
	}
	if (oneway)
		fprintf(out, " (%u one way)", oneway);
}

/* A server fabric as an operator counts it: which hosts are
 * which server, each template's GPUs, switches, memories, NICs and links,
 * and what joins the servers (rails, circuits between NICs). */
static void write_servers(const struct fabric *f, FILE *out)
{
	for (uint32_t t = 0; t < f->nservers; t++) {
		const struct server_template *st = &f->servers[t];
		uint32_t n = 0, first = UINT32_MAX, last = 0;

		for (uint32_t h = 0; h < f->nhosts; h++)
			if (f->hosts[h].server && strcmp(f->hosts[h].server, st->name) == 0) {
				n++;
				first = first == UINT32_MAX ? h : first;
				last = h;
			}
		fprintf(out, "\nservers %s: %u host%s", st->name, n, n == 1 ? "" : "s");
		if (n == 1)
			fprintf(out, " (%s)", f->hosts[first].name);
		else if (n > 1)
			fprintf(out, " (%s..%s)", f->hosts[first].name, f->hosts[last].name);
		fprintf(out, "\n  each: ");
		vertex_counts(out, st->vertices, st->nvertices);
		fprintf(out, "\n        ");
		link_counts(out, st->links, st->nlinks);
		if (st->nsets)
			fprintf(out, "; %u capacity set%s", st->nsets, st->nsets == 1 ? "" : "s");
		fprintf(out, "\n");
	}
	if (f->nfvertices || f->nflinks) {
		fprintf(out, "\nbetween servers: ");
		vertex_counts(out, f->fvertices, f->nfvertices);
		if (f->nfvertices)
			fprintf(out, " (%s%s%s)", f->fvertices[0].name,
				f->nfvertices > 1 ? ".." : "",
				f->nfvertices > 1 ? f->fvertices[f->nfvertices - 1].name : "");
		fprintf(out, "\n  ");
		link_counts(out, f->flinks, f->nflinks);
		if (f->nfsets)
			fprintf(out, "; %u capacity set%s", f->nfsets, f->nfsets == 1 ? "" : "s");
		fprintf(out, "\n");
	}
}

static void write_ring(const struct ring *r, FILE *out)
{
	char a[48], b[48];

	fmt_rate(a, sizeof(a), r->rate);
	fprintf(out,
		"\nWDM ring %s: %u nodes, %u wavelength%s x %s per fibre, %u fibre%s per "
		"direction\n",
		r->name, r->nmembers, r->wavelengths, r->wavelengths == 1 ? "" : "s", a, r->fibres,
		r->fibres == 1 ? "" : "s");
	fmt_duration(a, sizeof(a), r->mrr_delay);
	fmt_duration(b, sizeof(b), r->oeo_delay);
	fprintf(out,
		"  per node: %u interface%s x %u MRRs (add/drop up to %u wavelengths); "
		"MRR tuning %s, O/E/O %s\n",
		r->interfaces, r->interfaces == 1 ? "" : "s", r->mrrs, r->interfaces * r->mrrs, a,
		b);
	fmt_rate(a, sizeof(a), r->rate * r->wavelengths * r->fibres * 2.0 /* both directions */);
	fprintf(out, "  capacity per ring segment: %s (both directions)\n  ", a);
	driver_line(out, &r->driver);
	fprintf(out, "\n");
}

static void write_switch(const struct fswitch *s, FILE *out)
{
	char a[48];

	if (s->kind == SWITCH_OCS) {
		fmt_duration(a, sizeof(a), s->reconfig_time);
		fprintf(out, "\noptical circuit switch %s: %u x %u ports, reconfigures in %s\n  ",
			s->name, s->ports, s->ports, a);
	} else {
		fmt_duration(a, sizeof(a), s->move_time);
		fprintf(out, "\npatch panel %s: %u x %u ports, %s per move\n  ", s->name, s->ports,
			s->ports, a);
	}
	driver_line(out, &s->driver);
	fprintf(out, "\n");
}

static void write_wiring(const struct fabric *f, FILE *out)
{
	static const char *const pat[] = {"", "explicit", "sequential", "per-port"};

	fprintf(out, "\nwiring (%s): %u host ports attached", pat[f->wiring_cfg.pattern],
		f->nwiring);
	for (uint32_t s = 0; s < f->nswitches; s++) {
		uint32_t used = 0;

		for (uint32_t i = 0; i < f->nwiring; i++)
			used += f->wiring[i].sw == s;
		fprintf(out, "%s %s %u/%u", s ? "," : ";", f->switches[s].name, used,
			f->switches[s].ports);
	}
	fprintf(out, "\n");
}

/* How many circuits each switch carries, and the first few of them. */
static void write_circuits(const struct fabric *f, FILE *out)
{
	uint32_t show = f->ncircuits < 4 ? f->ncircuits : 4;

	fprintf(out, "  circuits: %u", f->ncircuits);
	for (uint32_t s = 0; s < f->nswitches; s++) {
		uint32_t c = 0;

		for (uint32_t i = 0; i < f->ncircuits; i++)
			c += f->circuits[i].sw == s;
		if (c)
			fprintf(out, "%s %u on %s", s ? "," : ";", c, f->switches[s].name);
	}
	fprintf(out, "\n");
	for (uint32_t i = 0; i < show; i++) {
		const struct circuit *c = &f->circuits[i];

		fprintf(out, "    %s:%u -> %s:%u  (%s in %u -> out %u)\n",
			f->hosts[c->src_host].name, c->src_port, f->hosts[c->dst_host].name,
			c->dst_port, f->switches[c->sw].name, c->in_port, c->out_port);
	}
	if (show < f->ncircuits)
		fprintf(out, "    ... (%u more; --json lists them all)\n", f->ncircuits - show);
}

static void write_topology(const struct fabric *f, FILE *out)
{
	const struct topo_facts *t = &f->facts;

	fprintf(out, "\ntopology %s: %u nodes, degree %u, %u links%s\n", f->graph->spec, t->nodes,
		t->degree, t->arcs, t->symmetric ? " (bidirectional)" : "");
	if (f->topology.auto_picked)
		fprintf(out,
			"  picked by the topology finder (topology: auto) for the "
			"collectives: %.6g us predicted\n",
			f->topology.auto_time_us);
	if (t->diameter_known)
		fprintf(out, "  diameter %u; the Moore bound for %u nodes of degree %u is %u\n",
			t->diameter, t->nodes, t->degree, t->moore_diameter);
	if (t->self_loops)
		fprintf(out, "  %u self-loop%s (%s)\n", t->self_loops,
			t->self_loops == 1 ? "" : "s",
			f->topology.self_loops == SELF_LOOPS_DARK ? "ports left dark"
								  : "ports looped back");
	if (f->degraded)
		fprintf(out, "  failures: schedules run on %s%s\n", f->degraded->spec,
			f->nfailed_hosts ? " (failed hosts take no part)" : "");
	if (f->ncircuits)
		write_circuits(f, out);
}

static void write_workload(const struct fabric *f, FILE *out)
{
	char a[48], b[48];

	if (f->ncollectives) {
		fprintf(out, "\ncollectives:\n");
		for (uint32_t i = 0; i < f->ncollectives; i++) {
			const struct collective *c = &f->collectives[i];

			fmt_size(a, sizeof(a), c->size);
			fprintf(out, "  %s of %s per node%s%s\n", sched_collective_name(c->op), a,
				c->algorithm ? ", algorithm " : "",
				c->algorithm ? c->algorithm : "");
		}
	}
	fmt_duration(a, sizeof(a), f->cost.alpha);
	fprintf(out, "\ncost model: alpha %s per step", a);
	if (f->cost.link_bandwidth > 0) {
		fmt_rate(b, sizeof(b), f->cost.link_bandwidth);
		fprintf(out, ", link bandwidth %s", b);
	}
	fprintf(out, "\n");
}

void fabric_write_text(const struct fabric *f, FILE *out)
{
	fprintf(out, "fabric %s (%s)\n", f->name, f->file);
	if (f->description)
		fprintf(out, "  %s\n", f->description);
	/* hosts that are servers have no NIC ports of their own to count */
	bool all_servers = f->nhosts > 0;

	for (uint32_t h = 0; h < f->nhosts; h++)
		all_servers &= f->hosts[h].server != NULL;
	if (!all_servers)
		write_hosts(f, out);
	write_servers(f, out);
	for (uint32_t i = 0; i < f->nrings; i++)
		write_ring(&f->rings[i], out);
	for (uint32_t i = 0; i < f->nswitches; i++)
		write_switch(&f->switches[i], out);
	if (f->nwiring)
		write_wiring(f, out);
	if (f->graph)
		write_topology(f, out);
	write_workload(f, out);
}
