/* libFuzzer: topology specs never crash; errors carry a column. */
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ofc_error err = {0};
	struct graph *g = NULL;
	char spec[256];

	if (size >= sizeof(spec))
		return 0;
	memcpy(spec, data, size);
	spec[size] = '\0';
	if (topo_build(spec, &g, &err) == 0) {
		struct topo_facts f;

		/* Keep runs short: facts only on small graphs. */
		if (g->n <= 4096)
			topo_facts(g, &f, 1);
		graph_free(g);
	} else if (err.code != OFC_E_INPUT || err.col == 0) {
		abort();
	}
	return 0;
}
