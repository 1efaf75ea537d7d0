/* What a ring's MRR agents must hold: the config's `lightpaths` turned into
 * MRR channels. A lightpath from A to B on wavelength w and interface i
 * needs an MRR of interface i at A tuned to add w and one at B tuned to
 * drop w; the nodes in between pass w through untouched, which is what
 * makes a WDM ring reconfigure in one MRR tuning delay (TeraRack, as in
 * the OpTree paper, Sec. II). Whether lightpaths share a fibre segment is
 * routing and wavelength assignment, checked in rwa/, not here. */
#include "controller/fabric/fabric.h"
#include "drivers/drivers.h"

#include <stdlib.h>
#include <string.h>

void ring_target(const struct fabric *f, uint32_t ri, struct device_state *out)
{
	const struct ring *r = &f->rings[ri];

	state_init(out, DEV_RING);
	for (uint32_t k = 0; k < r->nlightpaths; k++) {
		const struct lightpath_cfg *lp = &r->lightpaths[k];

		state_add_chan(out,
			       (struct mrr_chan){lp->src, lp->interface, lp->wavelength, MRR_ADD});
		state_add_chan(out,
			       (struct mrr_chan){lp->dst, lp->interface, lp->wavelength, MRR_DROP});
	}
	state_sort(out);
}
