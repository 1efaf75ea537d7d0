/* A dry run's transaction as ofc.v1.TransactionInfo: what a plan of
 * devices would do (state "planned", its operations, the switching time,
 * the plan in `ofc plan`'s words and device by device, how the target was
 * aimed), one builder for `ofc plan FILE --json`, `ofc apply --dry-run
 * --json` and ofcd's answer to a dry ApplyConfig or Reconfigure, so the
 * three say the same. Every string is copied into the arena: ofcd closes
 * the planned ctl before it sends the answer. */
#include "controller/export/export.h"
#include "controller/export/internal.h"
#include "controller/reconfig/reconfig.h"

static Ofc__V1__HostPort *host_port(struct arena *a, uint32_t host, uint32_t port)
{
	Ofc__V1__HostPort *m = arena_alloc(a, sizeof(*m));

	ofc__v1__host_port__init(m);
	SET(m, host, host);
	SET(m, port, port);
	return m;
}

static Ofc__V1__PlannedOp *op_msg(struct arena *a, const struct op *op)
{
	static const char *const names[] = {
	    [OP_DISCONNECT] = "disconnect",   [OP_CONNECT] = "connect",
	    [OP_TUNE_OFF] = "detune",	      [OP_TUNE_ON] = "tune",
	    [OP_LINK_DEL] = "remove-circuit", [OP_LINK_ADD] = "add-circuit",
	    [OP_ROUTE_SET] = "set-route",     [OP_ROUTE_DEL] = "remove-route",
	};
	Ofc__V1__PlannedOp *m = arena_alloc(a, sizeof(*m));

	ofc__v1__planned_op__init(m);
	m->op = (char *)names[op->kind];
	switch (op->kind) {
	case OP_DISCONNECT:
	case OP_CONNECT:
		SET(m, in, op->xc.in);
		SET(m, out, op->xc.out);
		break;
	case OP_TUNE_OFF:
	case OP_TUNE_ON:
		SET(m, node, op->ch.node);
		SET(m, interface, op->ch.iface);
		SET(m, wavelength, op->ch.wl);
		m->role = (char *)(op->ch.role == MRR_ADD ? "add" : "drop");
		break;
	case OP_LINK_DEL:
	case OP_LINK_ADD:
		m->src = host_port(a, op->link.src_host, op->link.src_port);
		m->dst = host_port(a, op->link.dst_host, op->link.dst_port);
		break;
	case OP_ROUTE_SET:
	case OP_ROUTE_DEL:
		SET(m, host, op->route.host);
		SET(m, to, op->route.dst_host);
		SET(m, port, op->route.port);
		break;
	}
	return m;
}

static const char *kind_name(enum dev_class c)
{
	return c == DEV_SWITCH ? "switch" : c == DEV_RING ? "ring" : "hosts";
}

/* A device's identity, its counts and (with_ops) its operations in the
 * order the transaction applies them. */
static Ofc__V1__PlannedDevice *device_msg(struct arena *a, const struct ctl_device *cd,
					  bool with_ops)
{
	Ofc__V1__PlannedDevice *m = arena_alloc(a, sizeof(*m));
	struct ctl_plan_counts k = ctl_plan_counts(&cd->plan);

	ofc__v1__planned_device__init(m);
	m->name = arena_strdup(a, cd->cfg.name);
	m->kind = (char *)kind_name(cd->cfg.cls);
	m->driver = arena_strdup(a, cd->cfg.driver);
	if (cd->cfg.address)
		m->address = arena_strdup(a, cd->cfg.address);
	SET(m, remove, k.del);
	SET(m, add, k.add);
	SET(m, routes_set, k.rset);
	SET(m, routes_remove, k.rdel);
	SET(m, unchanged, state_size(&cd->target) - k.add - k.rset);
	SET(m, estimated_seconds, cd->est_seconds);
	if (!with_ops)
		return m;
	m->ops = arena_array(a, cd->plan.n, sizeof(*m->ops));
	for (uint32_t j = 0; j < cd->plan.n; j++)
		m->ops[m->n_ops++] = op_msg(a, &cd->plan.ops[j]);
	return m;
}

static Ofc__V1__Renumbering *relabel_msg(struct arena *a, const struct fabric_relabel *rel)
{
	Ofc__V1__Renumbering *m = arena_alloc(a, sizeof(*m));

	ofc__v1__renumbering__init(m);
	SET(m, links, rel->arcs);
	SET(m, kept, rel->kept);
	SET(m, kept_identity, rel->kept_identity);
	SET(m, kept_links, rel->kept_links);
	SET(m, renumbered_nodes, rel->moved_nodes);
	SET(m, complete, rel->complete);
	SET(m, seconds, rel->seconds);
	return m;
}

static const char *choice_kind(enum ctl_choice_kind k)
{
	return k == CHOICE_REQUESTED ? "requested" : k == CHOICE_KEEP ? "keep" : "alternative";
}

static Ofc__V1__TargetCandidate *candidate_msg(struct arena *a, const struct ctl_candidate *k)
{
	Ofc__V1__TargetCandidate *m = arena_alloc(a, sizeof(*m));

	ofc__v1__target_candidate__init(m);
	m->kind = (char *)choice_kind(k->kind);
	m->topology = arena_strdup(a, k->spec);
	m->label = arena_strdup(a, k->label);
	SET(m, moves, k->moves);
	SET(m, reconfig_seconds, k->reconfig_s);
	SET(m, collective_us, k->collective_us);
	SET(m, steps, k->steps);
	SET(m, total_seconds, k->total_s);
	SET(m, renumbered, k->relabelled);
	SET(m, links, k->arcs);
	SET(m, kept, k->kept);
	SET(m, fits, k->fits);
	return m;
}

static Ofc__V1__TargetChoice *choice_msg(struct arena *a, const struct ctl_choice *ch)
{
	Ofc__V1__TargetChoice *m = arena_alloc(a, sizeof(*m));

	ofc__v1__target_choice__init(m);
	SET(m, horizon, ch->horizon);
	m->priced = arena_strdup(a, ch->priced);
	m->not_priced = arena_strdup(a, ch->left_out);
	SET(m, chosen, (uint32_t)ch->chosen);
	m->why = arena_strdup(a, ch->why);
	if (ch->not_candidate[0])
		m->in_place_not_candidate = arena_strdup(a, ch->not_candidate);
	m->candidates = arena_array(a, ch->n, sizeof(*m->candidates));
	for (uint32_t i = 0; i < ch->n; i++)
		m->candidates[m->n_candidates++] = candidate_msg(a, &ch->cand[i]);
	return m;
}

/* The plan device by device and how its target was aimed: the partition,
 * the renumbering (unless a choice made it: each candidate says its own),
 * the choice. */
static Ofc__V1__DevicePlan *device_plan_msg(struct arena *a, const struct reconfigure_result *r,
					    bool with_ops)
{
	const struct ctl *c = r->planned;
	Ofc__V1__DevicePlan *m = arena_alloc(a, sizeof(*m));

	ofc__v1__device_plan__init(m);
	if (c->partition)
		m->partition = arena_strdup(a, c->partition->name);
	if (r->renumbered && !r->chose)
		m->relabel = relabel_msg(a, &r->relabel);
	if (r->chose)
		m->choice = choice_msg(a, &r->choice);
	m->devices = arena_array(a, c->ndevs, sizeof(*m->devices));
	for (uint32_t i = 0; i < c->ndevs; i++)
		m->devices[m->n_devices++] = device_msg(a, &c->devs[i], with_ops);
	if (!with_ops)
		SET(m, ops_left_out, true);
	return m;
}

bool txn_planned_msg(struct arena *a, const struct reconfigure_result *r, size_t max_bytes,
		     Ofc__V1__TransactionInfo *t)
{
	const struct ctl *c = r->planned;
	struct strbuf sb = STRBUF_INIT;

	t->state = "planned";
	SET(t, operations, ctl_plan_size(c));
	SET(t, switching_seconds, ctl_plan_seconds(c));
	ctl_plan_text(c, &sb);
	t->plan = arena_strdup(a, sb.buf ? sb.buf : "");
	sb_free(&sb);
	t->device_plan = device_plan_msg(a, r, true);
	if (ofc__v1__transaction_info__get_packed_size(t) <= max_bytes)
		return true;
	/* Too big for the answer's frame: the operations go first (each
	 * device keeps its counts), then the plan's words; the arena keeps
	 * what is dropped until it is freed. */
	t->device_plan = device_plan_msg(a, r, false);
	if (ofc__v1__transaction_info__get_packed_size(t) > max_bytes)
		t->plan = NULL;
	return false;
}
