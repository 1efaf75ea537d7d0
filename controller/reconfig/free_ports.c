/* The whole fabric aimed on its free ports alone. While ofcd holds
 * partitions for their owners (Slurm jobs), no plan may change their
 * circuits, so a plain Reconfigure of the fabric is refused as soon as its
 * target differs on one held port; and a partition released keeps its
 * circuits by design, so the fabric stays "NOT at target" until its ports
 * are aimed again. Aiming the free ports alone is the way out: every
 * switch's target is the fabric's on the ports no kept partition has, and
 * what the switch holds now on the kept partitions' ports. The commit is
 * the fabric's (its topology recorded), and at_target, judged outside the
 * held partitions' ports, then holds. */
#include "controller/reconfig/internal.h"

#include <stdlib.h>
#include <string.h>

static uint32_t owner_of(const uint32_t *owner, uint32_t ports, uint32_t port)
{
	return port <= ports ? owner[port] : UINT32_MAX;
}

/* Device cd (switch s) aimed: what it holds on kept ports, the fabric's
 * target elsewhere. A target cross-connect on a port that a kept one
 * uses (a kept partition's port joined to a free one) is refused. */
static int aim_switch(struct ctl_device *cd, const struct fabric *f, uint32_t s,
		      const uint32_t *owner, const struct partition *const *keep, uint32_t *kept,
		      struct ofc_error *err)
{
	uint32_t ports = f->switches[s].ports;
	uint8_t *used = xcalloc(((size_t)ports + 1) * 2, 1); /* [in] then [ports + 1 + out] */
	struct device_state want;
	int rc = 0;

	state_init(&want, DEV_SWITCH);
	for (uint32_t k = 0; k < cd->actual.nxc; k++) {
		struct xconn x = cd->actual.xc[k];

		if (owner_of(owner, ports, x.in) == UINT32_MAX &&
		    owner_of(owner, ports, x.out) == UINT32_MAX)
			continue;
		state_add_xconn(&want, x.in, x.out);
		(*kept)++;
		if (x.in <= ports)
			used[x.in] = 1;
		if (x.out <= ports)
			used[ports + 1 + x.out] = 1;
	}
	for (uint32_t k = 0; k < cd->target.nxc && rc == 0; k++) {
		struct xconn x = cd->target.xc[k];
		uint32_t a = owner_of(owner, ports, x.in), b = owner_of(owner, ports, x.out);

		if (a != UINT32_MAX || b != UINT32_MAX)
			continue; /* the kept partition's ports are its own */
		if ((x.in <= ports && used[x.in]) || (x.out <= ports && used[ports + 1 + x.out])) {
			/* the kept cross-connect that holds the port */
			struct xconn y = {0};
			uint32_t who = UINT32_MAX;

			for (uint32_t j = 0; j < want.nxc && who == UINT32_MAX; j++)
				if (want.xc[j].in == x.in || want.xc[j].out == x.out) {
					y = want.xc[j];
					who = owner_of(owner, ports, y.in);
					if (who == UINT32_MAX)
						who = owner_of(owner, ports, y.out);
				}
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "switch %s: cross-connect %u -> %u joins a port of "
					   "partition '%s' to a free port the target needs for "
					   "%u -> %u; nothing was planned (the partition's owner "
					   "takes it down, or it is released first)",
					   cd->cfg.name, y.in, y.out,
					   who == UINT32_MAX ? "?" : keep[who]->name, x.in, x.out);
			break;
		}
		state_add_xconn(&want, x.in, x.out);
	}
	if (rc == 0) {
		state_sort(&want);
		state_free(&cd->target);
		cd->target = want;
		batch_free(&cd->plan);
		state_diff(&cd->actual, &cd->target, &cd->plan);
		cd->est_seconds = ctl_ops_seconds(cd, &cd->plan);
	} else {
		state_free(&want);
	}
	free(used);
	return rc;
}

int ctl_free_ports_aim(struct ctl *c, const struct partition *const *keep, uint32_t nkeep,
		       uint32_t *kept, struct ofc_error *err)
{
	const struct fabric *f = c->fabric;
	uint32_t *host_of;
	int rc = 0;

	*kept = 0;
	if (!nkeep)
		return 0; /* every port is free: the whole fabric's plan */
	for (uint32_t i = 0; i < c->ndevs; i++)
		if (c->devs[i].cfg.cls == DEV_HOSTS)
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "the testbed is up; the free ports alone cannot be "
					     "aimed under a testbed (ofc testbed down first)");
	host_of = xmalloc(((size_t)f->nhosts + 1) * sizeof(*host_of));
	for (uint32_t h = 0; h < f->nhosts; h++)
		host_of[h] = UINT32_MAX;
	for (uint32_t i = 0; i < nkeep; i++)
		for (uint32_t m = 0; m < keep[i]->nmembers; m++) {
			/* by name: the partitions may be of another config's
			 * fabric struct (the running one's) */
			int h = fabric_find_host(f, keep[i]->members[m]);

			if (h >= 0)
				host_of[h] = i;
		}
	for (uint32_t i = 0; i < c->ndevs && rc == 0; i++) {
		struct ctl_device *cd = &c->devs[i];
		int s = cd->cfg.cls == DEV_SWITCH ? fabric_find_switch(f, cd->cfg.name) : -1;

		if (s < 0)
			continue; /* (rings: a topology's Reconfigure has none) */
		uint32_t *owner = fabric_port_owners(f, (uint32_t)s, host_of);
		rc = aim_switch(cd, f, (uint32_t)s, owner, keep, kept, err);
		free(owner);
	}
	free(host_of);
	if (rc < 0) {
		/* nothing half-aimed */
		for (uint32_t i = 0; i < c->ndevs; i++)
			batch_free(&c->devs[i].plan);
		*kept = 0;
	}
	return rc;
}
