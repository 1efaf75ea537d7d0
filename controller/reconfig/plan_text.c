/* A plan in words, as `ofc plan` prints it and ofcd answers a dry run:
 * its counts and switching time, and every operation, a switch's ports
 * named by the host ports cabled to them as `ofc show` names them. */
#include "controller/reconfig/internal.h"

#include <stdlib.h>

struct ctl_plan_counts ctl_plan_counts(const struct op_batch *b)
{
	struct ctl_plan_counts k = {0};

	for (uint32_t i = 0; i < b->n; i++)
		switch (b->ops[i].kind) {
		case OP_DISCONNECT:
		case OP_TUNE_OFF:
		case OP_LINK_DEL:
			k.del++;
			break;
		case OP_CONNECT:
		case OP_TUNE_ON:
		case OP_LINK_ADD:
			k.add++;
			break;
		case OP_ROUTE_SET:
			k.rset++;
			break;
		case OP_ROUTE_DEL:
			k.rdel++;
			break;
		}
	return k;
}

/* The host port cabled to each port of a switch (attachment index + 1, 0
 * for none), so a plan names host:port as `ofc show` does. Caller frees. */
static uint32_t *switch_ports(const struct fabric *f, const struct ctl_device *cd)
{
	int s = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;
	uint32_t *at;

	if (s < 0)
		return NULL;
	at = xcalloc((size_t)f->switches[s].ports + 2, sizeof(*at));
	for (uint32_t i = 0; i < f->nwiring; i++)
		if (f->wiring[i].sw == (uint32_t)s && f->wiring[i].sw_port <= f->switches[s].ports)
			at[f->wiring[i].sw_port] = i + 1;
	return at;
}

static void port_name(const struct fabric *f, const uint32_t *at, uint32_t ports, uint32_t p,
		      char *buf, size_t n)
{
	if (at && p <= ports && at[p])
		snprintf(buf, n, "%s:%u", f->hosts[f->wiring[at[p] - 1].host].name,
			 f->wiring[at[p] - 1].host_port);
	else
		snprintf(buf, n, "-");
}

static void op_text(const struct fabric *f, const uint32_t *at, uint32_t ports, const struct op *op,
		    char *buf, size_t n)
{
	char from[80], to[80];

	switch (op->kind) {
	case OP_DISCONNECT:
	case OP_CONNECT:
		port_name(f, at, ports, op->xc.in, from, sizeof(from));
		port_name(f, at, ports, op->xc.out, to, sizeof(to));
		snprintf(buf, n, "%c %u -> %u  (%s -> %s)", op->kind == OP_CONNECT ? '+' : '-',
			 op->xc.in, op->xc.out, from, to);
		break;
	case OP_TUNE_OFF:
	case OP_TUNE_ON:
		snprintf(buf, n, "%c node %u interface %u wavelength %u %s",
			 op->kind == OP_TUNE_ON ? '+' : '-', op->ch.node, op->ch.iface, op->ch.wl,
			 op->ch.role == MRR_ADD ? "add" : "drop");
		break;
	case OP_LINK_DEL:
	case OP_LINK_ADD:
		snprintf(buf, n, "%c circuit %s:%u -> %s:%u", op->kind == OP_LINK_ADD ? '+' : '-',
			 f->hosts[op->link.src_host].name, op->link.src_port,
			 f->hosts[op->link.dst_host].name, op->link.dst_port);
		break;
	case OP_ROUTE_SET:
	case OP_ROUTE_DEL:
		snprintf(buf, n, "%c route on %s to %s via port %u",
			 op->kind == OP_ROUTE_SET ? '~' : '-', f->hosts[op->route.host].name,
			 f->hosts[op->route.dst_host].name, op->route.port);
		break;
	}
}

double ctl_plan_seconds(const struct ctl *c)
{
	double est = 0;

	/* a transaction drives its devices side by side (drive.c) */
	for (uint32_t i = 0; i < c->ndevs; i++)
		est = c->devs[i].est_seconds > est ? c->devs[i].est_seconds : est;
	return est;
}

/* How many devices the plan changes. */
static uint32_t devices_changed(const struct ctl *c)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->ndevs; i++)
		n += c->devs[i].plan.n > 0;
	return n;
}

void ctl_plan_seconds_text(const struct ctl *c, char *buf, size_t n)
{
	double est = ctl_plan_seconds(c);
	char d[32];

	buf[0] = 0;
	if (est <= 0)
		return;
	fmt_duration_long(d, sizeof(d), est);
	snprintf(buf, n, "switching time about %s%s", d,
		 devices_changed(c) > 1 ? ", the devices driven side by side" : "");
}

void ctl_plan_text(const struct ctl *c, struct strbuf *out)
{
	char est[96];

	ctl_plan_seconds_text(c, est, sizeof(est));
	sb_printf(out, "fabric %s", c->fabric->name);
	if (c->partition)
		sb_printf(out, ", partition %s", c->partition->name);
	sb_printf(out, ": %u operation%s on %u device%s", ctl_plan_size(c),
		  ctl_plan_size(c) == 1 ? "" : "s", c->ndevs, c->ndevs == 1 ? "" : "s");
	if (est[0])
		sb_printf(out, " (%s)", est);
	sb_printf(out, "\n");
	for (uint32_t i = 0; i < c->ndevs; i++) {
		const struct ctl_device *cd = &c->devs[i];
		struct ctl_plan_counts k = ctl_plan_counts(&cd->plan);
		uint32_t kept = state_size(&cd->target) - k.add - k.rset;

		sb_printf(out, "%s (%s%s%s): ", cd->cfg.name, cd->cfg.driver,
			  cd->cfg.address ? " at " : "", cd->cfg.address ? cd->cfg.address : "");
		if (cd->cfg.cls == DEV_SWITCH)
			sb_printf(out, "%u cross-connect%s to remove, %u to add, %u unchanged\n",
				  k.del, k.del == 1 ? "" : "s", k.add, cd->target.nxc - k.add);
		else if (cd->cfg.cls == DEV_RING)
			sb_printf(out, "%u MRR%s to detune, %u to tune, %u unchanged\n", k.del,
				  k.del == 1 ? "" : "s", k.add, cd->target.nch - k.add);
		else
			sb_printf(
			    out,
			    "%u circuit%s to remove, %u to add; %u route%s to set, %u to remove; "
			    "%u unchanged\n",
			    k.del, k.del == 1 ? "" : "s", k.add, k.rset, k.rset == 1 ? "" : "s",
			    k.rdel, kept);
		uint32_t *at = switch_ports(c->fabric, cd);

		for (uint32_t j = 0; j < cd->plan.n; j++) {
			char buf[240];

			op_text(c->fabric, at, cd->cfg.ports, &cd->plan.ops[j], buf, sizeof(buf));
			sb_printf(out, "  %s\n", buf);
		}
		free(at);
	}
	if (c->ndevs == 0)
		sb_printf(out,
			  "(no switch or ring of this fabric has a driver: nothing to drive)\n");
}
