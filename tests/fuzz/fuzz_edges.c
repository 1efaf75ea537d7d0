/* libFuzzer: edge lists (edges:FILE's text, quietly and not) and failure
 * lists (--fail, ReportFailure's links) never crash; every error carries
 * its position, and a quiet error never quotes the input. */
#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct graph *torus;
	struct ofc_error err = {0};
	struct graph *g = NULL;
	const char *text = (const char *)data;
	char list[512];

	if (size > (1u << 16))
		return 0;
	for (int quiet = 0; quiet < 2; quiet++) {
		if (topo_edges_text("fuzz.edges", text, size, quiet, &g, &err) == 0) {
			if (g->n == 0 || g->m == 0)
				abort();
			graph_free(g);
			g = NULL;
		} else if (err.code != OFC_E_INPUT || err.line == 0 || err.col == 0 ||
			   strcmp(err.file, "fuzz.edges") != 0) {
			abort();
		}
	}
	if (!torus && topo_build("torus:4x4", &torus, &err) < 0)
		abort();
	if (size < sizeof(list)) {
		uint8_t dead[16] = {0};

		memcpy(list, data, size);
		list[size] = '\0';
		if (topo_fail_items(torus, list, &g, dead, &err) == 0)
			graph_free(g);
		else if (err.code != OFC_E_INPUT)
			abort();
	}
	return 0;
}
