/* libFuzzer: the YAML loader and validator must never crash, leak or hang,
 * and must reject bad input with a positioned OFC_E_INPUT error, the
 * validator's too (server fabrics, partitions, failures and
 * rates are all checked there; tests/fuzz/config.dict names their keys). */
#include <stdlib.h>
#include <string.h>

#include "controller/cli/cli.h"
#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/ofcd/ofcd.h"
#include "controller/pick/pick.h"
#include "controller/reconfig/reconfig.h"
#include "controller/schedule/schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;

	if (config_parse("fuzz.yaml", (const char *)data, size, &f, &err) == 0) {
		f->picker = &pick_here; /* (topology: auto's finder, as the CLI's) */
		if (fabric_validate(f, &err) < 0 &&
		    (err.code != OFC_E_INPUT || err.line == 0 || !err.msg[0]))
			abort();
		fabric_free(f);
	} else if (err.code != OFC_E_INPUT || err.line == 0) {
		abort(); /* every config error is bad input with a position */
	}
	return 0;
}
