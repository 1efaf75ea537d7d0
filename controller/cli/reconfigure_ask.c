/* The one builder of a Reconfigure: `ofc reconfigure`'s options and the
 * Slurm prolog's job both say what they ask in a struct reconfigure_ask,
 * and this checks the combination and makes the message, so the two send
 * the same request for the same ask. */
#include "controller/cli/internal.h"
#include "controller/slurm/slurm.h"

#include <stdlib.h>
#include <string.h>

int reconfigure_stages(const struct reconfigure_ask *a, protobuf_c_boolean *has_loss, double *loss,
		       protobuf_c_boolean *has_grace, uint32_t *grace_ms, struct ofc_error *err)
{
	*has_loss = *has_grace = 0;
	if (a->has_grace && !(a->max_loss > 0))
		return ofc_error_set(err, OFC_E_USAGE, "--grace goes with --max-loss");
	if (!(a->max_loss > 0))
		return 0;
	*has_loss = 1;
	*loss = a->max_loss;
	if (a->has_grace) {
		*has_grace = 1;
		*grace_ms = (uint32_t)(a->grace_s * 1000 + 0.5);
	}
	return 0;
}

int reconfigure_build(struct reconfigure_ask *a, Ofc__V1__Reconfigure *rq, struct ofc_error *err)
{
	bool workload = a->collective || a->has_size || a->has_nodes;
	bool hosts = a->hostlist || a->hosts;

	if (a->topology && workload)
		return ofc_error_set(err, OFC_E_USAGE, "give --topology or a workload, not both");
	if (a->free_ports && (hosts || a->partition))
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--free-ports aims the fabric's topology or workload: not with "
		    "--partition or --hosts");
	if (hosts && (!a->partition || !a->topology))
		return ofc_error_set(err, OFC_E_USAGE,
				     "--hosts makes a partition: give --partition NAME and "
				     "--topology SPEC too");
	if (!hosts && a->relabel)
		return ofc_error_set(err, OFC_E_USAGE, "--relabel goes with --hosts");
	if (!hosts && a->partition && (a->topology || workload))
		return ofc_error_set(err, OFC_E_USAGE,
				     "--partition goes to the partition's own topology: no "
				     "--topology or workload with it");
	if (!hosts && !a->partition && !a->topology && !(a->collective && a->has_size))
		return ofc_error_set(err, OFC_E_USAGE,
				     "give --topology SPEC, --collective C and --size M, or "
				     "--partition NAME");
	if (a->max_loss > 0 && (a->partition || hosts || workload || a->free_ports))
		return ofc_error_set(err, OFC_E_USAGE,
				     "--max-loss stages a change of the whole fabric's topology: "
				     "give --topology SPEC alone");
	if (a->verify_wiring &&
	    (a->partition || hosts || a->free_ports || a->max_loss || a->dry_run))
		return ofc_error_set(
		    err, OFC_E_USAGE,
		    "--verify-wiring checks a commit of the whole fabric's topology "
		    "or workload: not with %s",
		    a->dry_run	    ? "--dry-run"
		    : a->max_loss   ? "--max-loss"
		    : a->free_ports ? "--free-ports"
				    : "--partition or --hosts");
	if (reconfigure_stages(a, &rq->has_max_loss_percent, &rq->max_loss_percent,
			       &rq->has_grace_ms, &rq->grace_ms, err) < 0)
		return -1;
	if (a->hostlist && !a->hosts) {
		struct ofc_error e = {0};

		if (slurm_hostlist_expand(a->hostlist, &a->own, &a->nhosts, &e) < 0)
			return ofc_error_set(err, OFC_E_USAGE, "--hosts '%s': %s", a->hostlist,
					     e.msg);
		a->hosts = a->own;
	}

	rq->partition = (char *)a->partition;
	rq->n_hosts = a->nhosts;
	rq->hosts = a->hosts;
	rq->has_relabel = rq->relabel = a->relabel;
	rq->has_dry_run = rq->dry_run = a->dry_run;
	rq->has_free_ports = rq->free_ports = a->free_ports;
	rq->has_verify_wiring_ms = a->verify_wiring;
	rq->verify_wiring_ms = a->verify_wiring_ms;
	if (a->topology) {
		rq->target_case = OFC__V1__RECONFIGURE__TARGET_TOPOLOGY;
		rq->topology = (char *)a->topology;
	} else if (workload) {
		a->wl = (Ofc__V1__Workload)OFC__V1__WORKLOAD__INIT;
		a->wl.collective = (char *)a->collective;
		a->wl.has_size_bytes = a->has_size;
		a->wl.size_bytes = a->size;
		a->wl.has_nodes = a->has_nodes;
		a->wl.nodes = a->nodes;
		rq->target_case = OFC__V1__RECONFIGURE__TARGET_WORKLOAD;
		rq->workload = &a->wl;
	}
	/* else a partition to its own topology: no target */
	return 0;
}

void reconfigure_ask_free(struct reconfigure_ask *a)
{
	if (a->own)
		slurm_strv_free(a->own, a->nhosts);
	a->own = NULL;
}
