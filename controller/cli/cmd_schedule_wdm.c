/* ofc schedule FILE on a config with a WDM ring: all-gather by OpTree or a
 * baseline, with the ring's own parameters (wavelengths, fibres, rate,
 * interfaces x MRRs, delays). Schedule node k is the ring's k-th member. */
#include "controller/cli/internal.h"

#include <string.h>

int schedule_wdm(struct schedule_request *req)
{
	const struct fabric *f = req->fabric;
	const struct ring *ring = &f->rings[0];
	struct wdm_request q = {.cmd = req->cmd,
				.ring_name = ring->name,
				.algo = req->algo ? req->algo : "optree",
				.overlap = req->overlap,
				.json = req->json,
				.format = req->format,
				.output = req->output};

	if (req->collective != SCHED_ALLGATHER)
		return cli_usage_error(req->cmd,
				       "%s: on a WDM ring only allgather is scheduled (OpTree and "
				       "its baselines), not %s",
				       req->file, sched_collective_name(req->collective));
	if (f->nrings > 1)
		fprintf(stderr, "ofc schedule: %s has %u rings; scheduling the first, '%s'\n",
			req->file, f->nrings, ring->name);
	if (req->chunks || req->alpha_set || req->bandwidth_set)
		return cli_usage_error(req->cmd, "--chunks, --alpha and --bandwidth apply to "
						 "direct-connect topologies, not WDM rings");
	q.ring = ring_optree_model(f, ring, req->size);
	return wdm_run(&q);
}
