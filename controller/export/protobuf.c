/* The fabric and topologies as protobuf messages (proto/fabric.proto,
 * proto/topology.proto). Messages are built in an arena that borrows the
 * model's strings, packed, and dropped in one go. */
#include "controller/export/export.h"
#include "controller/export/internal.h"
#include "proto/schedule.pb-c.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static Ofc__V1__Host *host_msg(struct arena *a, const struct host *ho)
{
	Ofc__V1__Host *h = NEW(a, Ofc__V1__Host, OFC__V1__HOST__INIT);

	h->name = S(ho->name);
	SET(h, ports, ho->ports);
	SET(h, port_rate_bps, ho->port_rate);
	h->n_port_rates_bps = ho->port_rates.n;
	h->port_rates_bps = ho->port_rates.v; /* borrowed, as the names */
	h->n_failed_ports = ho->nfailed_ports;
	h->failed_ports = ho->failed_ports;
	if (ho->failed)
		SET(h, failed, true);
	return h;
}

static Ofc__V1__Ring *ring_msg(struct arena *a, const struct fabric *f, const struct ring *r)
{
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
	return x;
}

static Ofc__V1__Switch *switch_msg(struct arena *a, const struct fswitch *s)
{
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
	return x;
}

/* The config's topology: its spec, its self-loops, the links failed or
 * slower than the rest. */
static Ofc__V1__TopologyTarget *target_msg(struct arena *a, const struct fabric *f)
{
	Ofc__V1__TopologyTarget *t =
	    NEW(a, Ofc__V1__TopologyTarget, OFC__V1__TOPOLOGY_TARGET__INIT);

	t->spec = S(f->graph ? f->graph->spec : f->topology.spec);
	SET(t, self_loops,
	    f->topology.self_loops == SELF_LOOPS_DARK ? OFC__V1__SELF_LOOPS__SELF_LOOPS_DARK
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
	return t;
}

Ofc__V1__Fabric *fabric_msg(struct arena *a, const struct fabric *f)
{
	Ofc__V1__Fabric *m = NEW(a, Ofc__V1__Fabric, OFC__V1__FABRIC__INIT);

	m->name = S(f->name);
	m->description = f->description;

	m->n_hosts = f->nhosts;
	m->hosts = arena_array(a, f->nhosts, sizeof(*m->hosts));
	for (uint32_t i = 0; i < f->nhosts; i++)
		m->hosts[i] = host_msg(a, &f->hosts[i]);

	m->n_rings = f->nrings;
	m->rings = arena_array(a, f->nrings, sizeof(*m->rings));
	for (uint32_t i = 0; i < f->nrings; i++)
		m->rings[i] = ring_msg(a, f, &f->rings[i]);

	m->n_switches = f->nswitches;
	m->switches = arena_array(a, f->nswitches, sizeof(*m->switches));
	for (uint32_t i = 0; i < f->nswitches; i++)
		m->switches[i] = switch_msg(a, &f->switches[i]);

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

	if (f->topology.present)
		m->topology = target_msg(a, f);

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
	SET(cm, switch_transaction_s, f->cost.switch_overhead.transaction);
	SET(cm, switch_circuit_s, f->cost.switch_overhead.circuit);
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

Ofc__V1__Step *schedule_transfers_msg(struct arena *a, const struct schedule *s,
				      const struct xfer *x, size_t n)
{
	Ofc__V1__Step *st = NEW(a, Ofc__V1__Step, OFC__V1__STEP__INIT);

	st->n_transfers = n;
	st->transfers = arena_array(a, n, sizeof(*st->transfers));
	for (size_t i = 0; i < n; i++)
		st->transfers[i] = transfer_msg(a, s, &x[i]);
	return st;
}

Ofc__V1__Schedule *schedule_step_msg(struct arena *a, const struct schedule *s, uint32_t t)
{
	Ofc__V1__Schedule *m = NEW(a, Ofc__V1__Schedule, OFC__V1__SCHEDULE__INIT);
	uint32_t k = sched_step_size(s, t);
	Ofc__V1__Step *st = schedule_transfers_msg(a, s, k ? &s->xfers[s->step_start[t]] : NULL, k);

	m->n_steps = 1;
	m->steps = arena_array(a, 1, sizeof(*m->steps));
	m->steps[0] = st;
	return m;
}

/* Writing a step as it is built: PB_CHUNK transfers at a time
 * in reused structs, packed by protobuf-c into one reused buffer and
 * written. A Step holding transfers [i, j) packs to those transfers' bytes
 * alone (a repeated field is its elements one after the other), so the
 * chunks' bytes concatenated are the whole Step's. The step goes out as
 * ScheduleStepBytes, Schedule's wire form with the step as bytes: protobuf-c
 * packs it with a placeholder of the step's length (the sum of the chunks'
 * packed sizes, a first pass), and the buffer writes the chunks where the
 * placeholder's bytes would go: to a file, or into memory sized before
 * (pb_steps_pack). */
struct step_stream {
	ProtobufCBuffer base;	  /* protobuf-c appends to out through it */
	FILE *out;		  /* NULL: to mem */
	uint8_t *mem, *end;	  /* the next byte to write, and the room's end */
	const struct schedule *s; /* the head: how blocks read */
	const struct xfer *xs;	  /* the step's transfers, n of them */
	size_t n;
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

/* The step's transfers [i, i + PB_CHUNK) into w->st. */
static void stream_chunk(struct step_stream *w, size_t i)
{
	const struct xfer *x = w->xs + i;
	size_t n = w->n - i;

	if (n > PB_CHUNK)
		n = PB_CHUNK;
	for (size_t k = 0; k < n; k++)
		transfer_fill(&w->x[k], w->s, &x[k]);
	w->st.n_transfers = n;
}

static size_t stream_step_size(struct step_stream *w)
{
	size_t len = 0, k = w->n;

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

/* n bytes at data out (into memory: room was made for them, or the
 * passes disagree and the stream fails). */
static void stream_emit(struct step_stream *w, const uint8_t *data, size_t n)
{
	if (w->failed || !n)
		return;
	if (w->out) {
		w->failed = fwrite(data, 1, n, w->out) != n;
		return;
	}
	if ((size_t)(w->end - w->mem) < n) {
		w->failed = true;
		return;
	}
	if (data != w->mem)
		memcpy(w->mem, data, n);
	w->mem += n;
}

static void stream_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct step_stream *w = (struct step_stream *)b;
	size_t done = 0;

	if (data != step_placeholder) {
		stream_emit(w, data, len);
		return;
	}
	for (size_t c = 0; c < w->nlen && !w->failed; c++) {
		size_t n = w->len[c];
		uint8_t *to;

		stream_chunk(w, c * PB_CHUNK);
		if (!w->out && (size_t)(w->end - w->mem) >= n) {
			to = w->mem; /* packed in place */
		} else {
			if (n > w->cap) {
				w->cap = n;
				w->buf = xrealloc(w->buf, n);
			}
			to = w->buf;
		}
		if (protobuf_c_message_pack(&w->st.base, to) != n)
			w->failed = true;
		stream_emit(w, to, n);
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

/* Each step as step(ctx, t) gives its transfers, as ScheduleStepBytes
 * through w (packed, or sized alone): the bytes they take. */
static uint64_t steps_through(struct step_stream *w, uint32_t nsteps,
			      const struct xfer *(*step)(void *ctx, uint32_t t, size_t *n),
			      void *ctx, bool pack)
{
	uint64_t total = 0;

	w->base.append = stream_append;
	w->x = xmalloc(PB_CHUNK * sizeof(*w->x));
	w->p = xmalloc(PB_CHUNK * sizeof(*w->p));
	for (size_t k = 0; k < PB_CHUNK; k++) {
		ofc__v1__transfer__init(&w->x[k]);
		w->p[k] = &w->x[k];
	}
	ofc__v1__step__init(&w->st);
	w->st.transfers = w->p;
	for (uint32_t t = 0; t < nsteps && !w->failed; t++) {
		Ofc__V1__ScheduleStepBytes m = OFC__V1__SCHEDULE_STEP_BYTES__INIT;

		w->xs = step(ctx, t, &w->n);
		SET(&m, step,
		    ((ProtobufCBinaryData){stream_step_size(w), (uint8_t *)step_placeholder}));
		total += protobuf_c_message_get_packed_size(&m.base);
		if (pack)
			protobuf_c_message_pack_to_buffer(&m.base, &w->base);
	}
	free(w->buf);
	free(w->len);
	free(w->p);
	free(w->x);
	return total;
}

/* The header (head's, with nsteps steps), then each step as step(ctx, t)
 * gives its transfers. */
static int write_steps(const struct schedule *head, uint32_t nsteps, FILE *out,
		       const struct xfer *(*step)(void *ctx, uint32_t t, size_t *n), void *ctx,
		       struct ofc_error *err)
{
	struct step_stream w = {.out = out, .s = head};
	struct arena a = {0};
	Ofc__V1__Schedule *h = schedule_header_msg(&a, head);
	int rc;

	h->num_steps = nsteps;
	rc = write_packed(&h->base, out, err);
	arena_free(&a);
	if (rc < 0)
		return rc;
	steps_through(&w, nsteps, step, ctx, true);
	return w.failed ? ofc_error_set(err, OFC_E_RUNTIME, "short write") : 0;
}

static const struct xfer *explicit_step(void *ctx, uint32_t t, size_t *n)
{
	const struct schedule *s = ctx;

	*n = sched_step_size(s, t);
	return s->xfers ? &s->xfers[s->step_start[t]] : NULL;
}

int schedule_write_pb(const struct schedule *s, FILE *out, struct ofc_error *err)
{
	return write_steps(s, s->nsteps, out, explicit_step, (void *)s, err);
}

/* A made step: the stream's, into one buffer of its largest step. */
struct made_step {
	const struct sched_stream *st;
	struct xfer *buf;
};

static struct made_step made_init(const struct sched_stream *st)
{
	return (struct made_step){.st = st, .buf = sched_stream_step_buffer(st)};
}

static const struct xfer *made_step(void *ctx, uint32_t t, size_t *n)
{
	struct made_step *m = ctx;

	m->st->fill(m->st->ctx, t, m->buf);
	*n = m->st->count[t];
	return m->buf;
}

int schedule_stream_write_pb(const struct sched_stream *st, FILE *out, struct ofc_error *err)
{
	struct made_step m = made_init(st);
	int rc;

	rc = write_steps(st->head, st->nsteps, out, made_step, &m, err);
	free(m.buf);
	return rc;
}

uint64_t pb_steps_size(const struct sched_stream *st)
{
	struct step_stream w = {.s = st->head};
	struct made_step m = made_init(st);
	uint64_t n = steps_through(&w, st->nsteps, made_step, &m, false);

	free(m.buf);
	return n;
}

int pb_steps_pack(const struct sched_stream *st, uint8_t *buf, uint64_t len)
{
	struct step_stream w = {.s = st->head, .mem = buf, .end = buf + len};
	struct made_step m = made_init(st);

	steps_through(&w, st->nsteps, made_step, &m, true);
	free(m.buf);
	/* Sized and packed from the same steps: they agree, or the bytes are
	 * not to be trusted. */
	return w.failed || w.mem != w.end ? -1 : 0;
}

Ofc__V1__Schedule *schedule_extra_msg(struct arena *a, const struct schedule_result *r)
{
	const struct schedule_outcome *o = r->main;
	Ofc__V1__Schedule *m =
	    schedule_fabric_msg(a, o->tau_b, r->fabric, r->links, r->nic_ports ? r->nlinks : 0);
	char buf[64];

	m->has_num_transfers = 1;
	m->num_transfers = o->ntransfers;
	if (r->kind == SCHEDULE_DIRECT && r->g) {
		struct schedule_optimality opt = schedule_optimality(r, o);

		m->has_degree = m->has_lower_bound_steps = m->has_lower_bound_tau_b = 1;
		m->degree = r->degree;
		m->lower_bound_steps = o->lb_steps;
		m->lower_bound_tau_b = frac_value(r->lb.tau_b);
		if (frac_valid(r->lb.tau_b))
			m->lower_bound_tau_b_fraction =
			    arena_strdup(a, frac_str(r->lb.tau_b, buf, sizeof(buf)));
		m->has_ratio = m->has_moore_optimal = m->has_bw_optimal = 1;
		m->ratio = o->ratio;
		m->moore_optimal = opt.moore;
		m->bw_optimal = opt.bw;
	}

	if (r->nabsent) {
		m->failed_nodes = arena_array(a, r->nabsent, sizeof(*m->failed_nodes));
		for (uint32_t v = 0; v < r->whole->n; v++)
			if (r->absent[v])
				m->failed_nodes[m->n_failed_nodes++] = v;
	}
	return m;
}

void schedule_msg_summary(Ofc__V1__Schedule *h, const Ofc__V1__Schedule *x)
{
	h->tau_b_fraction = x->tau_b_fraction;
	h->n_failed_nodes = x->n_failed_nodes;
	h->failed_nodes = x->failed_nodes;
#define COPY(f)                                                                                    \
	h->has_##f = x->has_##f;                                                                   \
	h->f = x->f
	COPY(num_transfers);
	COPY(degree);
	COPY(lower_bound_steps);
	COPY(lower_bound_tau_b);
	COPY(ratio);
	COPY(moore_optimal);
	COPY(bw_optimal);
#undef COPY
	h->lower_bound_tau_b_fraction = x->lower_bound_tau_b_fraction;
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

/* ---- reading a schedule back -------------------------------------------------
 * protobuf-c unpacks a message whole: every step a struct of its own and a
 * pointer, 56 bytes for an empty step that takes 2 in the file, so a 100 MB
 * file of 52 M empty steps became 4.6 GB, and a decode that ran out of
 * memory said the file was no Schedule. Instead the wire is walked by hand
 * twice: schedule_pb_parse counts the steps and transfers (nothing held but
 * the header fields the reader uses, unpacked by protobuf-c) so that the
 * caller can price the schedule before it exists, and schedule_pb_decode
 * builds it step by step, unpacking one transfer at a time into a schedule
 * reserved to its exact size. A field is a varint key (number << 3 | wire
 * type) and a value: a varint (type 0), 8 bytes (1), a varint length and
 * that many bytes (2) or 4 bytes (5); groups (3, 4) are refused, as
 * protobuf-c refuses them. */

#define PB_STEPS	6  /* Schedule.steps, and ScheduleStepBytes.step */
#define PB_TRANSFERS	1  /* Step.transfers */
#define PB_FAILED_NODES 42 /* Schedule.failed_nodes */
#define PB_REDUCED	60 /* Schedule.reduced */
#define PB_HEADER_MAX	(1u << 20)
#define PB_CLOCK_FIELDS 65536 /* fields between two looks at the clock */

static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;

	for (unsigned shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (*p == end)
			return -1;
		b = *(*p)++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1; /* more than 10 bytes */
}

int pb_next(const uint8_t **p, const uint8_t *end, struct pb_field *f)
{
	uint64_t key, len;

	f->start = *p;
	if (pb_varint(p, end, &key) < 0 || key >> 3 == 0 || key >> 3 > UINT32_MAX)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->type = key & 7;
	switch (f->type) {
	case 0:
		return pb_varint(p, end, &f->v);
	case 1:
	case 5:
		len = f->type == 1 ? 8 : 4;
		if ((uint64_t)(end - *p) < len)
			return -1;
		*p += len;
		return 0;
	case 2:
		if (pb_varint(p, end, &len) < 0 || len > (uint64_t)(end - *p))
			return -1;
		f->val = *p;
		f->len = (size_t)len;
		*p += len;
		return 0;
	default:
		return -1;
	}
}

/* protobuf-c's allocations through malloc, noting a failure: a message
 * that did not unpack for want of memory is said to be that. */
struct pb_alloc {
	ProtobufCAllocator base;
	bool failed;
};

static void *pb_alloc_fn(void *data, size_t size)
{
	void *p = malloc(size);

	if (!p)
		((struct pb_alloc *)data)->failed = true;
	return p;
}

static void pb_free_fn(void *data, void *p)
{
	(void)data;
	free(p);
}

static void pb_alloc_init(struct pb_alloc *a)
{
	a->base = (ProtobufCAllocator){pb_alloc_fn, pb_free_fn, a};
	a->failed = false;
}

static int pb_refuse(const struct schedule_pb *f, const uint8_t *at, const char *what,
		     struct ofc_error *err)
{
	return ofc_error_at(err, OFC_E_INPUT, f->name, 0, 0,
			    "not an ofc.v1.Schedule message (byte %zu: %s)", (size_t)(at - f->data),
			    what);
}

/* A step's transfers, counted; -1 (err set) when a field does not parse or
 * a transfer is not a message. */
static int count_transfers(const struct schedule_pb *f, const struct pb_field *st, uint64_t *k,
			   struct ofc_error *err)
{
	const uint8_t *p = st->val, *end = st->val + st->len;

	*k = 0;
	while (p < end) {
		struct pb_field x;

		if (pb_next(&p, end, &x) < 0)
			return pb_refuse(f, x.start, "a truncated field in a step", err);
		if (x.num == PB_TRANSFERS && x.type != 2)
			return pb_refuse(f, x.start, "a transfer that is not a message", err);
		*k += x.num == PB_TRANSFERS;
	}
	return 0;
}

/* failed_nodes, packed (type 2) or not: how many, and the first. */
static int count_failed(const struct schedule_pb *f, const struct pb_field *x, uint64_t *first,
			struct ofc_error *err)
{
	const uint8_t *p = x->val, *end = x->val + x->len;
	uint64_t v;

	if (x->type == 0) {
		if (!f->nfailed)
			*first = x->v;
		return 1;
	}
	if (x->type != 2)
		return pb_refuse(f, x->start, "failed_nodes of the wrong type", err);
	for (int n = 0;; n++) {
		if (p == end)
			return n;
		if (pb_varint(&p, end, &v) < 0)
			return pb_refuse(f, x->start, "a truncated failed_nodes", err);
		if (!f->nfailed && !n)
			*first = v;
	}
}

/* What the checks after the walk need from the header fields. */
static int check_header(struct schedule_pb *f, uint64_t first_failed, struct ofc_error *err)
{
	const Ofc__V1__Schedule *m = f->head;

	if (m->reduced)
		return ofc_error_at(err, OFC_E_INPUT, f->name, 0, 0,
				    "a symmetry-reduced schedule (node 0's program x %s): write it "
				    "without --reduced to run it",
				    m->reduced->name ? m->reduced->name : "a group");
	if (f->nfailed)
		/* The survivors' schedule names the whole topology's nodes; it
		 * checks out only with those nodes absent, which nothing that
		 * reads a file (ofc testbed run) models. */
		return ofc_error_at(
		    err, OFC_E_INPUT, f->name, 0, 0,
		    "a schedule for the survivors of %llu failed host%s (node %llu%s): "
		    "the testbed runs whole fabrics",
		    (unsigned long long)f->nfailed, f->nfailed == 1 ? "" : "s",
		    (unsigned long long)first_failed, f->nfailed > 1 ? ", ..." : "");
	if (!m->collective || sched_collective_parse(m->collective, &f->collective) < 0 ||
	    !m->has_nodes || m->nodes < 2 || m->nodes > SCHED_MAX_NODES)
		return ofc_error_at(err, OFC_E_INPUT, f->name, 0, 0,
				    "the schedule names no known collective or no node count");
	if (f->nsteps >= UINT32_MAX || f->nxfers >= UINT32_MAX)
		return ofc_error_at(err, OFC_E_INPUT, f->name, 0, 0,
				    "%llu steps and %llu transfers: more than a schedule holds (%u "
				    "of each)",
				    (unsigned long long)f->nsteps, (unsigned long long)f->nxfers,
				    UINT32_MAX - 1);
	f->nodes = m->nodes;
	return 0;
}

int schedule_pb_parse(const char *name, const uint8_t *data, size_t len,
		      const struct ofc_clock *clock, struct schedule_pb *f, struct ofc_error *err)
{
	const uint8_t *p = data, *end = data + len;
	uint8_t *head = NULL;
	size_t hlen = 0, hcap = 0;
	uint64_t first_failed = 0, fields = 0;
	struct pb_alloc al;
	int rc = -1;

	memset(f, 0, sizeof(*f));
	f->name = name;
	f->data = data;
	f->len = len;
	while (p < end) {
		struct pb_field x;
		uint64_t k;
		int n;

		if (++fields % PB_CLOCK_FIELDS == 0 &&
		    clock_check(clock, "reading the schedule", err))
			goto out;
		if (pb_next(&p, end, &x) < 0) {
			pb_refuse(f, x.start, "a truncated field", err);
			goto out;
		}
		switch (x.num) {
		case PB_STEPS:
			if (x.type != 2) {
				pb_refuse(f, x.start, "a step that is not a message", err);
				goto out;
			}
			if (count_transfers(f, &x, &k, err) < 0)
				goto out;
			f->nsteps++;
			f->nxfers += k;
			f->max_step_xfers = k > f->max_step_xfers ? k : f->max_step_xfers;
			break;
		case PB_FAILED_NODES:
			if ((n = count_failed(f, &x, &first_failed, err)) < 0)
				goto out;
			f->nfailed += (uint64_t)n;
			break;
		case 1: /* collective, algorithm, nodes, topology, size_bytes */
		case 2:
		case 3:
		case 4:
		case 5:
		case PB_REDUCED:
			/* What the reader uses, for protobuf-c to unpack; the
			 * rest (figures, links, metrics) is not read. */
			if (hlen + (size_t)(p - x.start) > PB_HEADER_MAX) {
				pb_refuse(f, x.start, "over 1 MiB of header fields", err);
				goto out;
			}
			GROW(head, hcap, hlen + (size_t)(p - x.start));
			memcpy(head + hlen, x.start, (size_t)(p - x.start));
			hlen += (size_t)(p - x.start);
			break;
		default:
			break;
		}
	}
	pb_alloc_init(&al);
	f->head = ofc__v1__schedule__unpack(&al.base, hlen, head);
	if (!f->head) {
		if (al.failed)
			ofc_error_at(err, OFC_E_RUNTIME, f->name, 0, 0,
				     "out of memory unpacking the schedule's header fields");
		else
			ofc_error_at(err, OFC_E_INPUT, f->name, 0, 0,
				     "not an ofc.v1.Schedule message (its header fields do not "
				     "unpack)");
		goto out;
	}
	rc = check_header(f, first_failed, err);
out:
	free(head);
	if (rc < 0)
		schedule_pb_close(f);
	return rc;
}

int schedule_pb_open(const char *path, uint64_t max_memory, const struct ofc_clock *clock,
		     struct schedule_pb *f, struct ofc_error *err)
{
	uint64_t have = mem_held(), max = SCHEDULE_PB_MAX;
	char *data = NULL;
	size_t len = 0;
	struct stat st;
	int fd = strcmp(path, "-") == 0 ? -1 : file_open_regular(AT_FDCWD, path, 0, err);

	memset(f, 0, sizeof(*f));
	if (fd < 0 && strcmp(path, "-") != 0)
		return -1;
	if (max_memory)
		max = have < max_memory ? max_memory - have : 0;
	max = max < SCHEDULE_PB_MAX ? max : SCHEDULE_PB_MAX;
	if (fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_size > max) {
		char size_s[32], max_s[32];

		close(fd);
		fmt_size(size_s, sizeof(size_s), (uint64_t)st.st_size);
		fmt_size(max_s, sizeof(max_s), max_memory);
		if (max == SCHEDULE_PB_MAX)
			return ofc_error_at(err, OFC_E_INPUT, path, 0, 0,
					    "%s: more than a schedule file may hold (1 GiB)",
					    size_s);
		return ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0,
				    "%s: reading it would take the process over the memory limit "
				    "of %s (--max-memory)",
				    size_s, max_s);
	}
	if (read_fd(fd >= 0 ? fd : STDIN_FILENO, path, max, &data, &len, err) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (fd >= 0)
		close(fd);
	if (schedule_pb_parse(path, (const uint8_t *)data, len, clock, f, err) < 0) {
		free(data);
		return -1;
	}
	f->owned = data;
	return 0;
}

uint64_t schedule_pb_bytes(const struct schedule_pb *f)
{
	return (f->nsteps + 1) * sizeof(uint32_t) + f->nxfers * sizeof(struct xfer);
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

/* Transfer x of step t (both 0-based) into r, or -1 with err naming them. */
static int read_transfer(const struct schedule_pb *f, const Ofc__V1__Transfer *x, uint32_t t,
			 uint64_t i, struct xfer *r, struct ofc_error *err)
{
	enum sched_collective c = f->collective;
	uint32_t n = f->nodes, origin = x->has_origin ? x->origin : UINT32_MAX;

	memset(r, 0, sizeof(*r));
	if (!x->has_src || !x->has_dst || x->src >= n || x->dst >= n || origin >= n ||
	    (c == SCHED_ALLTOALL && (!x->has_target || x->target >= n)) ||
	    read_frac(x->has_offset ? x->offset : 0, &r->offset) < 0 ||
	    read_frac(x->has_length ? x->length : 1, &r->length) < 0 ||
	    (uint64_t)r->offset + r->length > SCHED_ONE ||
	    (x->has_port && x->port >= SCHED_NO_LANE) || x->has_direction ||
	    (x->has_arcs &&
	     (x->arcs < 1 || x->arcs > SCHED_MAX_RUN || (x->arcs > 1 && !x->has_port))) ||
	    (x->has_blocks &&
	     (x->blocks == 0 || (x->blocks & (x->blocks - 1)) ||
	      (x->blocks > 1 && c != SCHED_ALLGATHER) || (uint64_t)origin + x->blocks > n)))
		return ofc_error_at(
		    err, OFC_E_INPUT, f->name, 0, 0,
		    "step %u, transfer %llu is not a direct-connect transfer between "
		    "the schedule's %u nodes",
		    t + 1, (unsigned long long)i + 1, n);
	r->src = (uint16_t)x->src;
	r->dst = (uint16_t)x->dst;
	r->block = c == SCHED_ALLTOALL ? origin * n + x->target : origin;
	r->lane = x->has_port ? (uint16_t)x->port : SCHED_NO_LANE;
	r->run = x->has_arcs ? (uint8_t)(x->arcs - 1) : 0;
	r->flags = xfer_flags(
	    DIR_NONE, x->has_op && x->op == OFC__V1__TRANSFER_OP__TRANSFER_OP_REDUCE ? XFER_REDUCE
										     : XFER_COPY);
	if (x->has_blocks)
		r->flags = xfer_span_flags(r->flags, (uint32_t)__builtin_ctz(x->blocks));
	return 0;
}

/* Step t's transfers (st, a field schedule_pb_parse walked) into s. */
static int decode_step(const struct schedule_pb *f, const struct pb_field *st, uint32_t t,
		       const struct ofc_clock *clock, struct schedule *s, struct ofc_error *err)
{
	const uint8_t *p = st->val, *end = st->val + st->len;
	struct pb_alloc al;
	uint64_t i = 0;

	pb_alloc_init(&al);
	sched_step(s);
	while (p < end) {
		struct pb_field x;
		Ofc__V1__Transfer *m;
		struct xfer r;
		int rc;

		(void)pb_next(&p, end, &x); /* parsed before */
		if (x.num != PB_TRANSFERS)
			continue;
		if (++i % PB_CLOCK_FIELDS == 0 && clock_check(clock, "reading the schedule", err))
			return -1;
		m = ofc__v1__transfer__unpack(&al.base, x.len, x.val);
		if (!m)
			return ofc_error_at(err, al.failed ? OFC_E_RUNTIME : OFC_E_INPUT, f->name,
					    0, 0, "step %u, transfer %llu: %s", t + 1,
					    (unsigned long long)i,
					    al.failed ? "out of memory unpacking it"
						      : "not an ofc.v1.Transfer message");
		rc = read_transfer(f, m, t, i - 1, &r, err);
		ofc__v1__transfer__free_unpacked(m, &al.base);
		if (rc < 0)
			return -1;
		sched_add(s, &r);
	}
	return 0;
}

int schedule_pb_decode(const struct schedule_pb *f, const struct ofc_clock *clock,
		       struct schedule *s, struct ofc_error *err)
{
	const uint8_t *p = f->data, *end = f->data + f->len;
	uint32_t t = 0;

	sched_init(s, f->collective, f->head->algorithm ? f->head->algorithm : "", f->nodes);
	if (f->head->topology)
		snprintf(s->topology, sizeof(s->topology), "%s", f->head->topology);
	s->size_bytes = f->head->has_size_bytes ? f->head->size_bytes : 0;
	sched_reserve_steps(s, f->nsteps);
	sched_reserve(s, f->nxfers);
	while (p < end) {
		struct pb_field x;

		(void)pb_next(&p, end, &x); /* parsed before */
		if (x.num != PB_STEPS)
			continue;
		if (++t % PB_CLOCK_FIELDS == 0 && clock_check(clock, "reading the schedule", err))
			goto fail;
		if (decode_step(f, &x, t - 1, clock, s, err) < 0)
			goto fail;
	}
	return 0;
fail:
	sched_free(s);
	return -1;
}

void schedule_pb_close(struct schedule_pb *f)
{
	if (f->head)
		ofc__v1__schedule__free_unpacked(f->head, NULL);
	free(f->owned);
	memset(f, 0, sizeof(*f));
}

int schedule_read_pb(const char *path, struct schedule *s, struct ofc_error *err)
{
	struct schedule_pb f;
	int rc;

	if (schedule_pb_open(path, 0, NULL, &f, err) < 0)
		return -1;
	rc = schedule_pb_decode(&f, NULL, s, err);
	schedule_pb_close(&f);
	return rc;
}
