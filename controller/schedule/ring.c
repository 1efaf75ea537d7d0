/* A config's WDM ring as OpTree's model (optree/optree.h). */
#include "controller/schedule/schedule.h"

struct optree_ring ring_optree_model(const struct fabric *f, const struct ring *ring, uint64_t size)
{
	for (uint32_t i = 0; !size && i < f->ncollectives; i++)
		if (f->collectives[i].op == COLL_ALLGATHER)
			size = f->collectives[i].size;
	return (struct optree_ring){
	    .nodes = ring->nmembers,
	    .wavelengths = ring->wavelengths,
	    .fibres = ring->fibres,
	    .max_add = ring->interfaces * (ring->mrrs ? ring->mrrs : ring->wavelengths),
	    .rate = ring->rate,
	    .mrr_delay = ring->mrr_delay,
	    .oeo_delay = ring->oeo_delay,
	    .block_bytes = size ? size : 4u << 20,
	};
}
