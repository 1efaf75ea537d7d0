/* A transaction's target renumbered (relabel) or narrowed to one
 * partition's ports (ctl.c reads and applies it): the partition's plan
 * leaves every port outside it alone, checked on the operations
 * themselves, whatever built the target. */
#include "controller/config/config.h"
#include "controller/reconfig/internal.h"

#include <stdlib.h>
#include <string.h>

/* -1 with err when ops has no renumbering of what (fabric or partition). */
static int no_renumbering(const struct fabric *f, const char *what, struct ofc_error *err)
{
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "fabric %s: renumbering %s is not done by this program (no search "
			     "given to reconfigure_run)",
			     f->name, what);
}

int ctl_relabel(struct ctl *c, const struct relabel_ops *ops, void *ctx,
		const struct relabel_opts *o, struct fabric_relabel *rep, struct ofc_error *err)
{
	struct fabric *f = c->fabric;

	memset(rep, 0, sizeof(*rep));
	if (!ops || !ops->fabric)
		return no_renumbering(f, "the whole fabric", err);
	const struct device_state **actual = ctl_switch_states(c);
	int rc = ops->fabric(ctx, f, actual, o, rep, err);
	free(actual);
	/* the failures cut the renumbered topology, not the config's */
	if (rc < 0 || (rep->changed && fabric_failures_renumbered(f, err) < 0))
		return -1;
	c->relabelled = rep->changed;
	ctl_retarget(c);
	return 0;
}

/* The plan of a partition: one of the switch's cross-connects in the
 * partition's ports and the other outside. */
static int straddles(const struct ctl_device *cd, const struct partition *p, struct xconn x,
		     struct ofc_error *err)
{
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "switch %s: cross-connect %u -> %u joins a port of partition '%s' "
			     "to a port outside it; nothing was planned (plan the whole fabric, "
			     "without --partition, to take it down)",
			     cd->cfg.name, x.in, x.out, p->name);
}

/* A partition's plan must not touch a port outside it: checked on the
 * operations themselves, whatever built the target. */
static int check_partition_plan(const struct ctl_device *cd, const struct partition *p,
				const uint8_t *mine, struct ofc_error *err)
{
	for (uint32_t k = 0; k < cd->plan.n; k++) {
		const struct op *op = &cd->plan.ops[k];

		bool inside = mine[op->xc.in] && mine[op->xc.out];

		/* A run-time partition takes down what straddles it. */
		if (p->runtime && op->kind == OP_DISCONNECT)
			inside = mine[op->xc.in] || mine[op->xc.out];
		if ((op->kind == OP_DISCONNECT || op->kind == OP_CONNECT) && !inside)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "switch %s: the plan of partition '%s' would change "
					     "cross-connect %u -> %u outside it; refused",
					     cd->cfg.name, p->name, op->xc.in, op->xc.out);
	}
	return 0;
}

static int no_testbed(const struct ctl *c, const struct partition *p, struct ofc_error *err)
{
	for (uint32_t i = 0; i < c->ndevs; i++)
		if (c->devs[i].cfg.cls == DEV_HOSTS)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "partition '%s': the testbed is up; a partition "
					     "cannot be reconfigured under a testbed yet (ofc "
					     "testbed down first)",
					     p->name);
	return 0;
}

const struct device_state **ctl_switch_states(const struct ctl *c)
{
	const struct fabric *f = c->fabric;
	const struct device_state **actual = xcalloc((size_t)f->nswitches + 1, sizeof(*actual));

	for (uint32_t i = 0; i < c->ndevs; i++) {
		int s = c->devs[i].cfg.cls == DEV_SWITCH
			    ? fabric_find_switch(f, c->devs[i].cfg.name)
			    : -1;

		if (s >= 0 && c->devs[i].read_ok)
			actual[s] = &c->devs[i].actual;
	}
	return actual;
}

int ctl_partition_aim(struct ctl *c, const struct partition *p, const struct circuit *pc,
		      uint32_t npc, struct ofc_error *err)
{
	const struct fabric *f = c->fabric;
	int rc = no_testbed(c, p, err);

	for (uint32_t i = 0; i < c->ndevs && rc == 0; i++) {
		struct ctl_device *cd = &c->devs[i];
		int s = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;

		if (s < 0) {
			state_copy(&cd->target, &cd->actual); /* rings: untouched */
			batch_free(&cd->plan);
			cd->est_seconds = 0;
			continue;
		}
		uint8_t *mine = partition_switch_ports(f, p, (uint32_t)s);

		state_clear(&cd->target);
		for (uint32_t k = 0; k < cd->actual.nxc && rc == 0; k++) {
			struct xconn x = cd->actual.xc[k];

			if (x.in > cd->cfg.ports || x.out > cd->cfg.ports)
				rc = ofc_error_set(err, OFC_E_RUNTIME,
						   "switch %s reports cross-connect %u -> %u "
						   "beyond its %u ports",
						   cd->cfg.name, x.in, x.out, cd->cfg.ports);
			else if (mine[x.in] != mine[x.out] && !p->runtime)
				rc = straddles(cd, p, x, err);
			else if (!mine[x.in] && !mine[x.out])
				state_add_xconn(&cd->target, x.in, x.out);
		}
		for (uint32_t k = 0; k < npc; k++)
			if (pc[k].sw == (uint32_t)s)
				state_add_xconn(&cd->target, pc[k].in_port, pc[k].out_port);
		state_sort(&cd->target);
		if (rc == 0) {
			batch_free(&cd->plan);
			state_diff(&cd->actual, &cd->target, &cd->plan);
			cd->est_seconds = ctl_ops_seconds(cd, &cd->plan);
			rc = check_partition_plan(cd, p, mine, err);
		}
		free(mine);
	}
	if (rc < 0) {
		/* Nothing half-aimed: the whole fabric's target again. */
		for (uint32_t i = 0; i < c->ndevs; i++)
			batch_free(&c->devs[i].plan);
		return -1;
	}
	c->partition = p;
	return 0;
}

int ctl_partition(struct ctl *c, const struct partition *p, const struct relabel_ops *ops,
		  void *ctx, const struct relabel_opts *relabel, struct fabric_relabel *rep,
		  struct ofc_error *err)
{
	const struct fabric *f = c->fabric;
	struct circuit *pc;
	uint32_t npc;
	int rc;

	if (no_testbed(c, p, err) < 0)
		return -1;
	if (relabel && (!ops || !ops->partition))
		return no_renumbering(f, "a partition", err);
	if (relabel) {
		const struct device_state **actual = ctl_switch_states(c);

		rc = ops->partition(ctx, f, p, actual, relabel, &pc, &npc, rep, err);
		free(actual);
		if (rc < 0)
			return -1;
	} else if (partition_circuits(f, p, &pc, &npc, err) < 0) {
		return -1;
	}
	rc = ctl_partition_aim(c, p, pc, npc, err);
	free(pc);
	if (rc == 0)
		c->relabelled = relabel && rep->changed;
	return rc;
}
