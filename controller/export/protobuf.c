/* The fabric and topologies as protobuf messages (proto/fabric.proto,
 * proto/topology.proto). Messages are built in an arena that borrows the
 * model's strings, packed, and dropped in one go. */
#include "controller/export/export.h"
#include "proto/schedule.pb-c.h"

#include <stdlib.h>
#include <string.h>

#define SET(msg, field, value)                                                                     \
	do {                                                                                       \
		(msg)->has_##field = 1;                                                            \
		(msg)->field = (value);                                                            \
	} while (0)

#define NEW(a, type, ...) (type *)new_msg((a), sizeof(type), &(type)__VA_ARGS__)

static void *new_msg(struct arena *a, size_t size, const void *init)
{
	void *p = arena_alloc(a, size);

	memcpy(p, init, size);
	return p;
}

static char *S(const char *s)
{
	return (char *)(s ? s : ""); /* protobuf-c wants char *; it only reads */
}

Ofc__V1__Topology *topology_msg(struct arena *a, const struct graph *g, const struct topo_facts *f,
				const struct port_map *pm, bool edges)
{
	Ofc__V1__Topology *t = NEW(a, Ofc__V1__Topology, OFC__V1__TOPOLOGY__INIT);

	t->spec = S(g->spec);
	SET(t, nodes, g->n);
	SET(t, degree, f->degree);
	SET(t, regular, f->regular);
	SET(t, edges, g->m);
	SET(t, symmetric, f->symmetric);
	SET(t, strongly_connected, f->strongly_connected);
	if (f->strongly_connected && f->diameter_known)
		SET(t, diameter, f->diameter);
	if (f->moore_diameter != UINT32_MAX)
		SET(t, moore_diameter, f->moore_diameter);
	SET(t, self_loops, f->self_loops);
	SET(t, parallel_edges, f->parallel_arcs);
	SET(t, vertex_transitive, g->vertex_transitive);
	if (edges) {
		Ofc__V1__Edge *e = arena_array(a, g->m, sizeof(*e));

		t->edge_list = arena_array(a, g->m, sizeof(*t->edge_list));
		t->n_edge_list = g->m;
		for (uint32_t u = 0, k = 0; u < g->n; u++)
			for (uint32_t i = g->off[u]; i < g->off[u + 1]; i++, k++) {
				ofc__v1__edge__init(&e[k]);
				SET(&e[k], src, u);
				SET(&e[k], dst, g->adj[i]);
				t->edge_list[k] = &e[k];
			}
	}
	if (pm && pm->to) {
		Ofc__V1__PortLayer *l = arena_array(a, pm->d, sizeof(*l));
		Ofc__V1__SelfLoop *s = arena_array(a, pm->nself, sizeof(*s));

		t->ports = arena_array(a, pm->d, sizeof(*t->ports));
		t->n_ports = pm->d;
		for (uint32_t j = 0; j < pm->d; j++) {
			ofc__v1__port_layer__init(&l[j]);
			l[j].n_to = pm->n;
			l[j].to = pm->to + (size_t)j * pm->n;
			t->ports[j] = &l[j];
		}
		t->self_loop_ports = arena_array(a, pm->nself, sizeof(*t->self_loop_ports));
		t->n_self_loop_ports = pm->nself;
		for (uint32_t k = 0; k < pm->nself; k++) {
			ofc__v1__self_loop__init(&s[k]);
			SET(&s[k], node, pm->self_node[k]);
			SET(&s[k], port, pm->self_port[k]);
			t->self_loop_ports[k] = &s[k];
		}
	}
	return t;
}

static Ofc__V1__Driver *driver_msg(struct arena *a, const struct driver_cfg *d)
{
	Ofc__V1__Driver *m;

	if (!d->present)
		return NULL;
	m = NEW(a, Ofc__V1__Driver, OFC__V1__DRIVER__INIT);
	m->type = S(d->type);
	m->address = d->address;
	m->credentials = d->credentials;
	SET(m, timeout_s, d->timeout);
	SET(m, retries, d->retries);
	return m;
}

Ofc__V1__Fabric *fabric_msg(struct arena *a, const struct fabric *f)
{
	Ofc__V1__Fabric *m = NEW(a, Ofc__V1__Fabric, OFC__V1__FABRIC__INIT);

	m->name = S(f->name);
	m->description = f->description;

	m->n_hosts = f->nhosts;
	m->hosts = arena_array(a, f->nhosts, sizeof(*m->hosts));
	for (uint32_t i = 0; i < f->nhosts; i++) {
		Ofc__V1__Host *h = NEW(a, Ofc__V1__Host, OFC__V1__HOST__INIT);

		h->name = S(f->hosts[i].name);
		SET(h, ports, f->hosts[i].ports);
		SET(h, port_rate_bps, f->hosts[i].port_rate);
		h->n_port_rates_bps = f->hosts[i].port_rates.n;
		h->port_rates_bps = f->hosts[i].port_rates.v; /* borrowed, as the names */
		h->n_failed_ports = f->hosts[i].nfailed_ports;
		h->failed_ports = f->hosts[i].failed_ports;
		if (f->hosts[i].failed)
			SET(h, failed, true);
		m->hosts[i] = h;
	}

	m->n_rings = f->nrings;
	m->rings = arena_array(a, f->nrings, sizeof(*m->rings));
	for (uint32_t i = 0; i < f->nrings; i++) {
		const struct ring *r = &f->rings[i];
		Ofc__V1__Ring *x = NEW(a, Ofc__V1__Ring, OFC__V1__RING__INIT);

		x->name = S(r->name);
		x->n_nodes = r->nmembers;
		x->nodes = arena_array(a, r->nmembers, sizeof(char *));
		for (uint32_t k = 0; k < r->nmembers; k++)
			x->nodes[k] = S(f->hosts[r->members[k]].name);
		SET(x, wavelengths, r->wavelengths);
		SET(x, fibres_per_direction, r->fibres);
		SET(x, rate_per_wavelength_bps, r->rate);
		SET(x, interfaces_per_node, r->interfaces);
		SET(x, mrrs_per_interface, r->mrrs);
		SET(x, mrr_tuning_delay_s, r->mrr_delay);
		SET(x, oeo_delay_s, r->oeo_delay);
		x->driver = driver_msg(a, &r->driver);
		m->rings[i] = x;
	}

	m->n_switches = f->nswitches;
	m->switches = arena_array(a, f->nswitches, sizeof(*m->switches));
	for (uint32_t i = 0; i < f->nswitches; i++) {
		const struct fswitch *s = &f->switches[i];
		Ofc__V1__Switch *x = NEW(a, Ofc__V1__Switch, OFC__V1__SWITCH__INIT);

		x->name = S(s->name);
		SET(x, kind,
		    s->kind == SWITCH_OCS ? OFC__V1__SWITCH_KIND__SWITCH_KIND_OCS
					  : OFC__V1__SWITCH_KIND__SWITCH_KIND_PATCH_PANEL);
		SET(x, ports, s->ports);
		if (s->kind == SWITCH_OCS)
			SET(x, reconfig_time_s, s->reconfig_time);
		else
			SET(x, move_time_s, s->move_time);
		x->driver = driver_msg(a, &s->driver);
		m->switches[i] = x;
	}

	m->n_wiring = f->nwiring;
	m->wiring = arena_array(a, f->nwiring, sizeof(*m->wiring));
	for (uint32_t i = 0; i < f->nwiring; i++) {
		const struct attachment *w = &f->wiring[i];
		Ofc__V1__Attachment *x = NEW(a, Ofc__V1__Attachment, OFC__V1__ATTACHMENT__INIT);

		x->host = S(f->hosts[w->host].name);
		SET(x, host_port, w->host_port);
		x->switch_name = S(f->switches[w->sw].name);
		SET(x, switch_port, w->sw_port);
		m->wiring[i] = x;
	}

	if (f->topology.present) {
		Ofc__V1__TopologyTarget *t =
		    NEW(a, Ofc__V1__TopologyTarget, OFC__V1__TOPOLOGY_TARGET__INIT);

		t->spec = S(f->graph ? f->graph->spec : f->topology.spec);
		SET(t, self_loops,
		    f->topology.self_loops == SELF_LOOPS_DARK
			? OFC__V1__SELF_LOOPS__SELF_LOOPS_DARK
			: OFC__V1__SELF_LOOPS__SELF_LOOPS_LOOPBACK);
		t->n_failed_links = f->topology.nfailed_links;
		t->failed_links = arena_array(a, t->n_failed_links, sizeof(*t->failed_links));
		for (size_t i = 0; i < t->n_failed_links; i++) {
			Ofc__V1__HostLink *l = NEW(a, Ofc__V1__HostLink, OFC__V1__HOST_LINK__INIT);

			l->a = f->topology.failed_links[i].a;
			l->b = f->topology.failed_links[i].b;
			t->failed_links[i] = l;
		}
		t->n_link_rates = f->topology.nlink_rates;
		t->link_rates = arena_array(a, t->n_link_rates, sizeof(*t->link_rates));
		for (size_t i = 0; i < t->n_link_rates; i++) {
			Ofc__V1__HostLink *l = NEW(a, Ofc__V1__HostLink, OFC__V1__HOST_LINK__INIT);

			l->a = f->topology.link_rates[i].a;
			l->b = f->topology.link_rates[i].b;
			SET(l, rate_bps, f->topology.link_rates[i].rate);
			t->link_rates[i] = l;
		}
		m->topology = t;
	}

	m->n_collectives = f->ncollectives;
	m->collectives = arena_array(a, f->ncollectives, sizeof(*m->collectives));
	for (uint32_t i = 0; i < f->ncollectives; i++) {
		const struct collective *c = &f->collectives[i];
		Ofc__V1__Collective *x = NEW(a, Ofc__V1__Collective, OFC__V1__COLLECTIVE__INIT);

		SET(x, op, (Ofc__V1__CollectiveOp)c->op);
		SET(x, size_bytes, c->size);
		x->algorithm = c->algorithm;
		m->collectives[i] = x;
	}

	Ofc__V1__CostModel *cm = NEW(a, Ofc__V1__CostModel, OFC__V1__COST_MODEL__INIT);
	SET(cm, alpha_s, f->cost.alpha);
	SET(cm, link_bandwidth_bps, f->cost.link_bandwidth);
	m->cost_model = cm;

	if (f->graph)
		m->logical =
		    topology_msg(a, f->graph, &f->facts, f->ports.to ? &f->ports : NULL, true);

	m->n_circuits = f->ncircuits;
	m->circuits = arena_array(a, f->ncircuits, sizeof(*m->circuits));
	for (uint32_t i = 0; i < f->ncircuits; i++) {
		const struct circuit *c = &f->circuits[i];
		Ofc__V1__Circuit *x = NEW(a, Ofc__V1__Circuit, OFC__V1__CIRCUIT__INIT);

		x->switch_name = S(f->switches[c->sw].name);
		SET(x, in_port, c->in_port);
		SET(x, out_port, c->out_port);
		x->src_host = S(f->hosts[c->src_host].name);
		SET(x, src_port, c->src_port);
		x->dst_host = S(f->hosts[c->dst_host].name);
		SET(x, dst_port, c->dst_port);
		m->circuits[i] = x;
	}
	return m;
}

static void pack(const ProtobufCMessage *m, uint8_t **buf, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(m);
	*buf = xmalloc(*len + 1);
	protobuf_c_message_pack(m, *buf);
}

int fabric_pack(const struct fabric *f, uint8_t **buf, size_t *len, struct ofc_error *err)
{
	struct arena a = {0};

	if (!f->validated)
		return ofc_error_set(err, OFC_E_RUNTIME, "fabric not validated");
	pack(&fabric_msg(&a, f)->base, buf, len);
	arena_free(&a);
	return 0;
}

int topology_pack(const struct graph *g, const struct topo_facts *facts, const struct port_map *pm,
		  uint8_t **buf, size_t *len)
{
	struct arena a = {0};

	pack(&topology_msg(&a, g, facts, pm, true)->base, buf, len);
	arena_free(&a);
	return 0;
}

int fabric_write_json(const struct fabric *f, FILE *out, struct ofc_error *err)
{
	struct arena a = {0};
	struct json_writer w;

	if (!f->validated)
		return ofc_error_set(err, OFC_E_RUNTIME, "fabric not validated");
	jw_init(&w, out, true);
	pb_write_json(&w, &fabric_msg(&a, f)->base);
	jw_finish(&w);
	arena_free(&a);
	return 0;
}

/* x as ofc.v1.Transfer into m, an initialised message (the arena's, or
 * one of the writer's reused structs): every optional field's presence is
 * set, so a struct filled before needs no clearing (zeroing it each time
 * was most of this function's cost). */
static void transfer_fill(Ofc__V1__Transfer *m, const struct schedule *s, const struct xfer *x)
{
	SET(m, src, x->src);
	SET(m, dst, x->dst);
	SET(m, origin, sched_block_origin(s, x->block));
	m->has_target = s->collective == SCHED_ALLTOALL;
	if (m->has_target)
		m->target = sched_block_target(s, x->block);
	SET(m, offset, sched_frac(x->offset));
	SET(m, length, sched_frac(x->length));
	SET(m, op,
	    xfer_op(x) == XFER_REDUCE ? OFC__V1__TRANSFER_OP__TRANSFER_OP_REDUCE
				      : OFC__V1__TRANSFER_OP__TRANSFER_OP_COPY);
	m->has_direction = m->has_fibre = m->has_wavelength = xfer_dir(x) != DIR_NONE;
	m->has_port = !m->has_direction && x->lane != SCHED_NO_LANE;
	m->has_arcs = m->has_port && x->run;
	if (m->has_direction) {
		m->direction = xfer_dir(x) == DIR_CW ? OFC__V1__DIRECTION__DIRECTION_CW
						     : OFC__V1__DIRECTION__DIRECTION_CCW;
		m->fibre = x->fibre;
		m->wavelength = x->lane;
	}
	if (m->has_port)
		m->port = x->lane;
	if (m->has_arcs)
		m->arcs = xfer_arcs(x);
	m->has_blocks = xfer_blocks(x) > 1;
	if (m->has_blocks)
		m->blocks = xfer_blocks(x);
}

static Ofc__V1__Transfer *transfer_msg(struct arena *a, const struct schedule *s,
				       const struct xfer *x)
{
	Ofc__V1__Transfer *m = NEW(a, Ofc__V1__Transfer, OFC__V1__TRANSFER__INIT);

	transfer_fill(m, s, x);
	return m;
}

static int write_packed(const ProtobufCMessage *m, FILE *out, struct ofc_error *err)
{
	uint8_t *buf;
	size_t len;

	pack(m, &buf, &len);
	if (len && fwrite(buf, 1, len, out) != len) {
		free(buf);
		return ofc_error_set(err, OFC_E_RUNTIME, "short write");
	}
	free(buf);
	return 0;
}

Ofc__V1__Schedule *schedule_header_msg(struct arena *a, const struct schedule *s)
{
	Ofc__V1__Schedule *h = NEW(a, Ofc__V1__Schedule, OFC__V1__SCHEDULE__INIT);

	h->collective = S(sched_collective_name(s->collective));
	h->algorithm = S(s->algorithm);
	SET(h, nodes, s->nodes);
	if (s->topology[0])
		h->topology = S(s->topology);
	if (s->size_bytes)
		SET(h, size_bytes, s->size_bytes);
	SET(h, num_steps, s->nsteps);
	if (s->time_us == s->time_us)
		SET(h, time_us, s->time_us);
	if (s->lower_bound_us == s->lower_bound_us)
		SET(h, lower_bound_us, s->lower_bound_us);
	SET(h, verified, s->verified);
	h->n_metrics = s->nmetrics;
	h->metrics = arena_array(a, s->nmetrics, sizeof(*h->metrics));
	for (unsigned i = 0; i < s->nmetrics; i++) {
		Ofc__V1__Schedule__MetricsEntry *e =
		    NEW(a, Ofc__V1__Schedule__MetricsEntry, OFC__V1__SCHEDULE__METRICS_ENTRY__INIT);

		e->key = S(s->metrics[i].name);
		SET(e, value, s->metrics[i].value);
		h->metrics[i] = e;
	}
	return h;
}

Ofc__V1__Schedule *schedule_step_msg(struct arena *a, const struct schedule *s, uint32_t t)
{
	Ofc__V1__Schedule *m = NEW(a, Ofc__V1__Schedule, OFC__V1__SCHEDULE__INIT);
	Ofc__V1__Step *st = NEW(a, Ofc__V1__Step, OFC__V1__STEP__INIT);
	uint32_t k = sched_step_size(s, t);

	st->n_transfers = k;
	st->transfers = arena_array(a, k, sizeof(*st->transfers));
	for (uint32_t i = 0; i < k; i++)
		st->transfers[i] = transfer_msg(a, s, &s->xfers[s->step_start[t] + i]);
	m->n_steps = 1;
	m->steps = arena_array(a, 1, sizeof(*m->steps));
	m->steps[0] = st;
	return m;
}

/* Writing a step as it is built (issue 17): PB_CHUNK transfers at a time
 * in reused structs, packed by protobuf-c into one reused buffer and
 * written. A Step holding transfers [i, j) packs to those transfers' bytes
 * alone (a repeated field is its elements one after the other), so the
 * chunks' bytes concatenated are the whole Step's. The step goes out as
 * ScheduleStepBytes, Schedule's wire form with the step as bytes: protobuf-c
 * packs it with a placeholder of the step's length (the sum of the chunks'
 * packed sizes, a first pass), and the buffer writes the chunks where the
 * placeholder's bytes would go. */
struct step_stream {
	ProtobufCBuffer base; /* protobuf-c appends to out through it */
	FILE *out;
	const struct schedule *s;
	uint32_t t;
	Ofc__V1__Transfer *x; /* PB_CHUNK structs and pointers to them */
	Ofc__V1__Transfer **p;
	Ofc__V1__Step st;
	size_t *len; /* each chunk's packed size, from the first pass */
	size_t nlen, cap_len;
	uint8_t *buf; /* a chunk's packed bytes */
	size_t cap;
	bool failed;
};

static const uint8_t step_placeholder[1];

/* Step t's transfers [i, i + PB_CHUNK) into w->st. */
static void stream_chunk(struct step_stream *w, size_t i)
{
	const struct xfer *x = &w->s->xfers[w->s->step_start[w->t] + i];
	size_t n = sched_step_size(w->s, w->t) - i;

	if (n > PB_CHUNK)
		n = PB_CHUNK;
	for (size_t k = 0; k < n; k++)
		transfer_fill(&w->x[k], w->s, &x[k]);
	w->st.n_transfers = n;
}

static size_t stream_step_size(struct step_stream *w)
{
	size_t len = 0, k = sched_step_size(w->s, w->t);

	w->nlen = (k + PB_CHUNK - 1) / PB_CHUNK;
	if (w->nlen > w->cap_len) {
		w->cap_len = w->nlen;
		w->len = xreallocarray(w->len, w->nlen, sizeof(*w->len));
	}
	for (size_t c = 0; c < w->nlen; c++) {
		stream_chunk(w, c * PB_CHUNK);
		w->len[c] = protobuf_c_message_get_packed_size(&w->st.base);
		len += w->len[c];
	}
	return len;
}

static void stream_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct step_stream *w = (struct step_stream *)b;
	size_t done = 0;

	if (data != step_placeholder) {
		if (!w->failed && len && fwrite(data, 1, len, w->out) != len)
			w->failed = true;
		return;
	}
	for (size_t c = 0; c < w->nlen && !w->failed; c++) {
		size_t n = w->len[c];

		stream_chunk(w, c * PB_CHUNK);
		if (n > w->cap) {
			w->cap = n;
			w->buf = xrealloc(w->buf, n);
		}
		if (protobuf_c_message_pack(&w->st.base, w->buf) != n ||
		    fwrite(w->buf, 1, n, w->out) != n)
			w->failed = true;
		done += n;
	}
	/* Sized and written from the same schedule: they agree, or the file
	 * is not to be trusted. */
	if (!w->failed && done != len)
		w->failed = true;
}

uint64_t schedule_pb_memory(const struct schedule *s, bool whole)
{
	/* A transfer's message and its pointer, and its packed bytes (varints:
	 * about PB_PACKED_TRANSFER): PB_CHUNK of them in the writer's reused
	 * structs, every transfer in ofcd's one message tree. */
	uint64_t most = whole ? s->nxfers : PB_CHUNK;

	return most * (sizeof(Ofc__V1__Transfer) + sizeof(void *) + PB_PACKED_TRANSFER);
}

int schedule_write_pb(const struct schedule *s, FILE *out, struct ofc_error *err)
{
	struct step_stream w = {.base.append = stream_append, .out = out, .s = s};
	struct arena a = {0};
	int rc;

	rc = write_packed(&schedule_header_msg(&a, s)->base, out, err);
	arena_free(&a);
	if (rc < 0)
		return rc;
	w.x = xmalloc(PB_CHUNK * sizeof(*w.x));
	w.p = xmalloc(PB_CHUNK * sizeof(*w.p));
	for (size_t k = 0; k < PB_CHUNK; k++) {
		ofc__v1__transfer__init(&w.x[k]);
		w.p[k] = &w.x[k];
	}
	ofc__v1__step__init(&w.st);
	w.st.transfers = w.p;
	for (w.t = 0; w.t < s->nsteps && !w.failed; w.t++) {
		Ofc__V1__ScheduleStepBytes m = OFC__V1__SCHEDULE_STEP_BYTES__INIT;

		SET(&m, step,
		    ((ProtobufCBinaryData){stream_step_size(&w), (uint8_t *)step_placeholder}));
		protobuf_c_message_pack_to_buffer(&m.base, &w.base);
	}
	free(w.buf);
	free(w.len);
	free(w.p);
	free(w.x);
	return w.failed ? ofc_error_set(err, OFC_E_RUNTIME, "short write") : 0;
}

Ofc__V1__Schedule *schedule_extra_msg(struct arena *a, const struct schedule_result *r)
{
	Ofc__V1__Schedule *m = schedule_fabric_msg(a, r->main->tau_b, r->fabric, r->links,
						   r->nic_ports ? r->nlinks : 0);

	if (r->nabsent) {
		m->failed_nodes = arena_array(a, r->nabsent, sizeof(*m->failed_nodes));
		for (uint32_t v = 0; v < r->whole->n; v++)
			if (r->absent[v])
				m->failed_nodes[m->n_failed_nodes++] = v;
	}
	return m;
}

Ofc__V1__Schedule *schedule_fabric_msg(struct arena *a, struct frac tau_b, const struct fabric *f,
				       const struct schedule_link *links, uint32_t nlinks)
{
	Ofc__V1__Schedule *m = arena_alloc(a, sizeof(*m));
	char buf[64];

	ofc__v1__schedule__init(m);
	if (frac_valid(tau_b))
		m->tau_b_fraction = arena_strdup(a, frac_str(tau_b, buf, sizeof(buf)));
	if (!nlinks)
		return m;
	m->links = arena_array(a, nlinks, sizeof(*m->links));
	for (uint32_t i = 0; i < nlinks; i++) {
		const struct schedule_link *k = &links[i];
		Ofc__V1__FabricLink *l = arena_alloc(a, sizeof(*l));
		ofc__v1__fabric_link__init(l);
		l->has_src = l->has_port = l->has_dst = 1;
		l->src = k->src;
		l->port = k->port;
		l->dst = k->dst;
		l->src_host = f->hosts[k->src].name;
		l->dst_host = f->hosts[k->dst].name;
		if (k->circuit >= 0) {
			const struct circuit *ci = &f->circuits[k->circuit];

			l->switch_name = f->switches[ci->sw].name;
			l->has_in_port = l->has_out_port = 1;
			l->in_port = ci->in_port;
			l->out_port = ci->out_port;
		}
		m->links[m->n_links++] = l;
	}
	return m;
}

Ofc__V1__Schedule *schedule_vertices_msg(struct arena *a, const struct fluid_net *n)
{
	Ofc__V1__Schedule *m = arena_alloc(a, sizeof(*m));

	ofc__v1__schedule__init(m);
	m->vertices = arena_array(a, n->nverts, sizeof(*m->vertices));
	for (uint32_t v = 0; v < n->nverts; v++) {
		Ofc__V1__ScheduleVertex *x = arena_alloc(a, sizeof(*x));

		ofc__v1__schedule_vertex__init(x);
		x->name = arena_strdup(a, fluid_vertex_name(n, v));
		x->has_gpu = x->has_store = x->has_copy = x->has_reduce = 1;
		x->gpu = (n->kind[v] & FLUID_TERMINAL) != 0;
		x->store = (n->kind[v] & FLUID_CAN_STORE) != 0;
		x->copy = (n->kind[v] & FLUID_CAN_COPY) != 0;
		x->reduce = (n->kind[v] & FLUID_CAN_REDUCE) != 0;
		m->vertices[m->n_vertices++] = x;
	}
	return m;
}

Ofc__V1__Schedule *schedule_reduced_msg(struct arena *a, const struct sched_group *G,
					uint64_t transfers)
{
	Ofc__V1__Schedule *m = arena_alloc(a, sizeof(*m));
	Ofc__V1__ReducedGroup *rg = arena_alloc(a, sizeof(*rg));

	ofc__v1__schedule__init(m);
	ofc__v1__reduced_group__init(rg);
	rg->name = arena_strdup(a, G->name);
	rg->radix = arena_array(a, G->ndims, sizeof(*rg->radix));
	for (uint32_t i = 0; i < G->ndims; i++)
		rg->radix[rg->n_radix++] = G->radix[i];
	rg->has_order = rg->has_transfers = rg->has_representatives = 1;
	rg->order = G->order;
	rg->transfers = transfers;
	rg->representatives = G->reps;
	if (G->reps > 1) {
		rg->step = arena_array(a, G->ndims, sizeof(*rg->step));
		for (uint32_t i = 0; i < G->ndims; i++)
			rg->step[rg->n_step++] = G->step[i];
	}
	m->reduced = rg;
	return m;
}

int schedule_append_pb(const Ofc__V1__Schedule *m, FILE *out, struct ofc_error *err)
{
	size_t len = protobuf_c_message_get_packed_size(&m->base);
	uint8_t *pk = xmalloc(len + 1);
	int rc = 0;

	protobuf_c_message_pack(&m->base, pk);
	if (len && fwrite(pk, 1, len, out) != len)
		rc = ofc_error_set(err, OFC_E_RUNTIME, "short write");
	free(pk);
	return rc;
}

/* A fraction of a block from the file into fixed point, refusing what is
 * not in [0, 1]. */
static int read_frac(double v, uint32_t *out)
{
	if (!(v >= 0 && v <= 1))
		return -1;
	*out = sched_fix(v);
	return 0;
}

int schedule_read_pb(const char *path, struct schedule *s, struct ofc_error *err)
{
	char *data = NULL;
	size_t len = 0;
	Ofc__V1__Schedule *m;
	enum sched_collective c;
	int rc = -1;

	if (read_file(path, SCHEDULE_PB_MAX, &data, &len, err) < 0)
		return -1;
	m = ofc__v1__schedule__unpack(NULL, len, (const uint8_t *)data);
	free(data);
	if (!m)
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "not an ofc.v1.Schedule message");
	if (m->reduced) {
		ofc_error_at(err, OFC_E_INPUT, path, 0, 0,
			     "a symmetry-reduced schedule (node 0's program x %s): write it "
			     "without --reduced to run it",
			     m->reduced->name ? m->reduced->name : "a group");
		goto out;
	}
	if (m->n_failed_nodes) {
		/* The survivors' schedule names the whole topology's nodes; it
		 * checks out only with those nodes absent, which nothing that
		 * reads a file (ofc testbed run) models. */
		ofc_error_at(err, OFC_E_INPUT, path, 0, 0,
			     "a schedule for the survivors of %zu failed host%s (node %u%s): the "
			     "testbed runs whole fabrics",
			     m->n_failed_nodes, m->n_failed_nodes == 1 ? "" : "s",
			     m->failed_nodes[0], m->n_failed_nodes > 1 ? ", ..." : "");
		goto out;
	}
	if (!m->collective || sched_collective_parse(m->collective, &c) < 0 || !m->has_nodes ||
	    m->nodes < 2 || m->nodes > SCHED_MAX_NODES) {
		ofc_error_at(err, OFC_E_INPUT, path, 0, 0,
			     "the schedule names no known collective or no node count");
		goto out;
	}
	sched_init(s, c, m->algorithm ? m->algorithm : "", m->nodes);
	if (m->topology)
		snprintf(s->topology, sizeof(s->topology), "%s", m->topology);
	s->size_bytes = m->has_size_bytes ? m->size_bytes : 0;
	for (size_t t = 0; t < m->n_steps; t++) {
		const Ofc__V1__Step *st = m->steps[t];

		sched_step(s);
		for (size_t i = 0; i < st->n_transfers; i++) {
			const Ofc__V1__Transfer *x = st->transfers[i];
			uint32_t origin = x->has_origin ? x->origin : UINT32_MAX;
			struct xfer r = {0};

			if (!x->has_src || !x->has_dst || x->src >= m->nodes ||
			    x->dst >= m->nodes || origin >= m->nodes ||
			    (c == SCHED_ALLTOALL && (!x->has_target || x->target >= m->nodes)) ||
			    read_frac(x->has_offset ? x->offset : 0, &r.offset) < 0 ||
			    read_frac(x->has_length ? x->length : 1, &r.length) < 0 ||
			    (x->has_port && x->port >= SCHED_NO_LANE) || x->has_direction ||
			    (x->has_arcs && (x->arcs < 1 || x->arcs > SCHED_MAX_RUN ||
					     (x->arcs > 1 && !x->has_port))) ||
			    (x->has_blocks && (x->blocks == 0 || (x->blocks & (x->blocks - 1)) ||
					       (x->blocks > 1 && c != SCHED_ALLGATHER) ||
					       (uint64_t)origin + x->blocks > m->nodes))) {
				ofc_error_at(err, OFC_E_INPUT, path, 0, 0,
					     "step %zu, transfer %zu is not a direct-connect "
					     "transfer between the schedule's %u nodes",
					     t + 1, i + 1, m->nodes);
				sched_free(s);
				goto out;
			}
			r.src = (uint16_t)x->src;
			r.dst = (uint16_t)x->dst;
			r.block = c == SCHED_ALLTOALL ? origin * m->nodes + x->target : origin;
			r.lane = x->has_port ? (uint16_t)x->port : SCHED_NO_LANE;
			r.run = x->has_arcs ? (uint8_t)(x->arcs - 1) : 0;
			r.flags = xfer_flags(
			    DIR_NONE, x->has_op && x->op == OFC__V1__TRANSFER_OP__TRANSFER_OP_REDUCE
					  ? XFER_REDUCE
					  : XFER_COPY);
			if (x->has_blocks)
				r.flags =
				    xfer_span_flags(r.flags, (uint32_t)__builtin_ctz(x->blocks));
			sched_add(s, &r);
		}
	}
	rc = 0;
out:
	ofc__v1__schedule__free_unpacked(m, NULL);
	return rc;
}
