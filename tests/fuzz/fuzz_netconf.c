/* libFuzzer: what a NETCONF switch sends as <get> data never crashes the
 * path from libyang's parse to ofc's state (drivers/netconf_data.c), and
 * what it accepts is a state an 8x8 switch can hold. The first byte picks
 * the module's revision (the list `pair` or `pairs`). Run from the source
 * tree's root: the modules are read from drivers/yang. */
#include <stdlib.h>

#include "drivers/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ly_ctx *ctx[2];
	static const char *const rev[2] = {"2017-08-04", "2015-06-10"};
	struct ofc_error err = {0};
	struct opsw_data d;
	int i;

	if (size < 1 || size > 1 << 16)
		return 0;
	i = data[0] & 1;
	if (!ctx[i] && opsw_context("drivers/yang", rev[i], &ctx[i], &err) < 0)
		abort(); /* run from the source tree */
	opsw_data_init(&d);
	if (opsw_parse(ctx[i], (const char *)data + 1, size - 1, 8, &d, &err) == 0) {
		for (uint32_t k = 0; k < d.xc.nxc; k++)
			if (d.xc.xc[k].in < 1 || d.xc.xc[k].in > 8 || d.xc.xc[k].out < 1 ||
			    d.xc.xc[k].out > 8)
				abort();
		for (uint32_t k = 0; k < d.nports; k++)
			if (d.ports[k].port < 1 || d.ports[k].port > 16)
				abort();
	} else if (!err.msg[0]) {
		abort(); /* every error says what was wrong */
	}
	opsw_data_free(&d);
	return 0;
}
