/* fabric_open: a config read and validated with `topology: auto` picked in
 * this process (pick_here). Apart from load.c because it links the finder:
 * the CLI, the benches and the tests call it; ofcd, which links no engine,
 * sets its planner's picker on the fabric and validates itself
 * (scripts/check-engines.py fails if it comes to link this file). */
#include "controller/config/config.h"
#include "controller/pick/pick.h"

int fabric_open(const char *path, struct fabric **out, struct ofc_error *err)
{
	struct fabric *f;

	*out = NULL;
	if (config_load(path, &f, err) < 0)
		return -1;
	f->picker = &pick_here;
	if (fabric_validate(f, err) < 0) {
		fabric_free(f);
		return -1;
	}
	*out = f;
	return 0;
}
