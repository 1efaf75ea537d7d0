/* libFuzzer: demand files (rwa_parse_demands). The first byte is the ring
 * size (2..257 nodes), the rest the file. Every demand accepted is within
 * the ring, between two different nodes, with a count of at least 1 and a
 * known direction; every rejection names its line and column. */
#include <stdlib.h>

#include "rwa/rwa.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rwa_demand *d = NULL;
	struct ofc_error err = {0};
	size_t n = 0;
	uint32_t nodes;

	if (size < 1 || size > 1 << 16)
		return 0;
	nodes = 2u + data[0];
	if (rwa_parse_demands("fuzz.dem", (const char *)data + 1, size - 1, nodes, &d, &n, &err) ==
	    0) {
		for (size_t i = 0; i < n; i++)
			if (d[i].src >= nodes || d[i].dst >= nodes || d[i].src == d[i].dst ||
			    d[i].count < 1 || d[i].dir > RWA_CCW)
				abort();
	} else if (err.code != OFC_E_INPUT || !err.line || !err.msg[0]) {
		abort();
	}
	free(d);
	return 0;
}
