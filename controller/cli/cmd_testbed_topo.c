/* The topology a testbed run schedules for: the one committed (the
 * record's, when a transaction applied another than the file names), or
 * a what-if (`testbed run --topology SPEC`: applied for the run, the one
 * before applied again after), so that a script neither plans for a
 * file's old topology after a reconfiguration nor writes a second file to
 * try another. */
#include "controller/cli/internal.h"

#include <stdlib.h>
#include <string.h>

int testbed_topo_committed(const struct fabric_cmd *fc, struct testbed_topo *w,
			   struct ofc_error *err)
{
	const struct fabric *f = fc->fabric;
	struct ctl_record r;
	const char *spec;
	int rc = 0;

	memset(w, 0, sizeof(*w));
	if (ctl_load_record(fc->state_dir, f->name, &r, err) < 0)
		return -1;
	/* (none: the file's topology, and the run refuses a schedule whose
	 * ports reach other hosts than the circuits do) */
	if ((spec = ctl_record_other_spec(f, &r)))
		rc = testbed_topo_open(f, spec, w, err);
	ctl_record_free(&r);
	return rc;
}

int testbed_topo_apply(const struct fabric_cmd *fc, struct fabric *f, struct ofc_error *err)
{
	struct ctl_opts o = {.state_dir = fc->state_dir,
			     .overrides = (const char *const *)fc->overrides,
			     .noverrides = fc->noverrides};
	struct reconfigure_req q = {.lock = true, .recover = true, .skip_empty = true};
	struct reconfigure_result r;
	struct ctl *ctl;
	int rc;

	if (ctl_open(f, &o, &ctl, err) < 0)
		return -1;
	q.ctl = ctl;
	rc = reconfigure_run(&q, &r, err);
	reconfigure_result_free(&r);
	ctl_close(ctl);
	return rc;
}
