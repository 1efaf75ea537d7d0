/* A device's state as ofc.v1.DeviceState, for `ofc status` and ofcd's
 * GetState alike (one shape either way: docs/json.md). */
#include "controller/export/export.h"
#include "drivers/drivers.h"
#include "proto/mrr.pb-c.h"

#include <stdlib.h>
#include <string.h>

static const char *kind_name(enum dev_class c)
{
	return c == DEV_SWITCH ? "switch" : c == DEV_RING ? "ring" : "hosts";
}

/* The cross-connects of switch sw as circuits between host ports, through
 * the wiring (switch port -> host port). */
static void add_circuits(struct arena *a, const struct fabric *f, int sw,
			 const struct device_state *s, Ofc__V1__DeviceState *m)
{
	uint32_t ports = sw >= 0 ? f->switches[sw].ports : 0;
	const struct attachment **at = xcalloc((size_t)ports + 2, sizeof(*at));

	for (uint32_t k = 0; k < f->nwiring; k++)
		if ((int)f->wiring[k].sw == sw && f->wiring[k].sw_port <= ports)
			at[f->wiring[k].sw_port] = &f->wiring[k];
	m->circuits = arena_array(a, s->nxc, sizeof(*m->circuits));
	for (uint32_t i = 0; i < s->nxc; i++) {
		Ofc__V1__Circuit *c = arena_alloc(a, sizeof(*c));
		uint32_t in = s->xc[i].in, out = s->xc[i].out;

		ofc__v1__circuit__init(c);
		c->switch_name = m->name;
		c->has_in_port = c->has_out_port = 1;
		c->in_port = in;
		c->out_port = out;
		if (in <= ports && at[in]) {
			c->src_host = f->hosts[at[in]->host].name;
			c->has_src_port = 1;
			c->src_port = at[in]->host_port;
		}
		if (out <= ports && at[out]) {
			c->dst_host = f->hosts[at[out]->host].name;
			c->has_dst_port = 1;
			c->dst_port = at[out]->host_port;
		}
		m->circuits[m->n_circuits++] = c;
	}
	free(at);
}

static bool has_chan(const struct device_state *s, struct mrr_chan c)
{
	for (uint32_t i = 0; i < s->nch; i++)
		if (memcmp(&s->ch[i], &c, sizeof(c)) == 0)
			return true;
	return false;
}

/* The ring's configured lightpaths whose add and drop MRRs are both tuned
 * (rings.c: add at the source, drop at the destination). */
static void add_lightpaths(struct arena *a, const struct fabric *f, int r,
			   const struct device_state *s, Ofc__V1__DeviceState *m)
{
	const struct ring *ring = &f->rings[r];

	m->lightpaths = arena_array(a, ring->nlightpaths, sizeof(*m->lightpaths));
	for (uint32_t k = 0; k < ring->nlightpaths; k++) {
		const struct lightpath_cfg *lp = &ring->lightpaths[k];
		Ofc__V1__Lightpath *l;

		if (!has_chan(s,
			      (struct mrr_chan){lp->src, lp->interface, lp->wavelength, MRR_ADD}) ||
		    !has_chan(s,
			      (struct mrr_chan){lp->dst, lp->interface, lp->wavelength, MRR_DROP}))
			continue;
		l = arena_alloc(a, sizeof(*l));
		ofc__v1__lightpath__init(l);
		l->from = lp->from;
		l->to = lp->to;
		l->has_wavelength = l->has_interface = 1;
		l->wavelength = lp->wavelength;
		l->interface = lp->interface;
		m->lightpaths[m->n_lightpaths++] = l;
	}
}

/* Every MRR channel the ring holds, in the state's order. */
static void add_channels(struct arena *a, const struct device_state *s, Ofc__V1__DeviceState *m)
{
	m->channels = arena_array(a, s->nch, sizeof(*m->channels));
	for (uint32_t i = 0; i < s->nch; i++) {
		Ofc__V1__MrrChannel *c = arena_alloc(a, sizeof(*c));

		ofc__v1__mrr_channel__init(c);
		c->has_node = c->has_interface = c->has_wavelength = c->has_role = 1;
		c->node = s->ch[i].node;
		c->interface = s->ch[i].iface;
		c->wavelength = s->ch[i].wl;
		c->role = s->ch[i].role == MRR_ADD ? OFC__V1__MRR_ROLE__MRR_ROLE_ADD
						   : OFC__V1__MRR_ROLE__MRR_ROLE_DROP;
		m->channels[m->n_channels++] = c;
	}
}

void device_alarms_msg(struct arena *a, const struct fabric *f, const struct device *dev,
		       Ofc__V1__DeviceState *m)
{
	int sw = fabric_find_switch(f, dev->cfg.name);

	if (dev->news_subscribed) {
		m->has_notifications = 1;
		m->notifications = 1;
	}
	if (!dev->nalarms)
		return;
	m->port_alarms = arena_array(a, dev->nalarms, sizeof(*m->port_alarms));
	for (uint32_t i = 0; i < dev->nalarms; i++) {
		const struct port_alarm *al = &dev->alarms[i];
		Ofc__V1__PortAlarm *p = arena_alloc(a, sizeof(*p));

		ofc__v1__port_alarm__init(p);
		p->has_port = 1;
		p->port = al->port;
		p->side = al->egress ? "egress" : "ingress";
		p->kind = al->kind == ALARM_FAILED ? "failed" : "low-power";
		if (al->kind == ALARM_LOW_POWER) {
			p->has_power_dbm = 1;
			p->power_dbm = al->power_dbm;
		}
		for (uint32_t k = 0; sw >= 0 && k < f->nwiring && !p->host_port; k++)
			if ((int)f->wiring[k].sw == sw && f->wiring[k].sw_port == al->port)
				p->host_port =
				    arena_printf(a, "%s:%u", f->hosts[f->wiring[k].host].name,
						 f->wiring[k].host_port);
		m->port_alarms[m->n_port_alarms++] = p;
	}
}

Ofc__V1__DeviceState *device_state_msg(struct arena *a, const struct fabric *f,
				       const struct device_cfg *cfg, const struct device_state *s)
{
	Ofc__V1__DeviceState *m = arena_alloc(a, sizeof(*m));

	ofc__v1__device_state__init(m);
	m->name = arena_strdup(a, cfg->name);
	m->driver = arena_strdup(a, cfg->driver);
	m->kind = (char *)kind_name(cfg->cls);
	if (cfg->address)
		m->address = arena_strdup(a, cfg->address);
	if (!s)
		return m;
	m->has_entries = 1;
	m->entries = state_size(s);
	if (cfg->cls == DEV_SWITCH)
		add_circuits(a, f, fabric_find_switch(f, cfg->name), s, m);
	for (uint32_t k = 0; k < f->nrings && cfg->cls == DEV_RING; k++)
		if (strcmp(f->rings[k].name, cfg->name) == 0)
			add_lightpaths(a, f, (int)k, s, m);
	if (cfg->cls == DEV_RING)
		add_channels(a, s, m);
	if (cfg->cls == DEV_HOSTS) {
		m->has_links = m->has_routes = 1;
		m->links = s->nlinks;
		m->routes = s->nroutes;
	}
	return m;
}

bool recorded_topology(const struct fabric *f, const char *spec, const struct graph **g,
		       struct topo_facts *facts, const struct port_map **pm, struct graph **own,
		       struct port_map *own_ports)
{
	struct ofc_error err = {0};

	*g = NULL;
	*pm = NULL;
	*own = NULL;
	memset(own_ports, 0, sizeof(*own_ports));
	if (!spec || !*spec)
		return false;
	if (f->graph && f->topology.spec && strcmp(spec, f->topology.spec) == 0) {
		*g = f->graph;
		*facts = f->facts;
		*pm = f->ports.to ? &f->ports : NULL;
		return true;
	}
	if (topo_build(spec, own, &err) < 0) {
		graph_free(*own);
		*own = NULL;
		return false;
	}
	*g = *own;
	topo_facts(*own, facts, 0);
	if (facts->regular && topo_ports(*own, own_ports, &err) == 0)
		*pm = own_ports;
	return true;
}
