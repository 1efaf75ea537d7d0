/* TestbedRun's what-if (`ofc --socket PATH testbed run --topology SPEC`):
 * the fabric reconfigured to SPEC for the runs and to the topology before
 * again after, each a Reconfigure as a client's would be (ofcd_run_mutation:
 * planned, checked against the held partitions, journaled and committed,
 * the hosts' circuits moved with the switch), inside the run's job, so
 * no other mutation comes between them and the runs. Their events are the
 * run's (deferred on the job the worker runs), the last state and config
 * the run publishes. */
#include "controller/ofcd/answer.h"
#include "controller/ofcd/testbed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ofcd_testbed_reconfigure(struct ofcd *d, struct job *j, const char *spec, bool from_client,
			     struct ofc_error *err)
{
	struct job sub = {.kind = JOB_RECONFIGURE,
			  .req_id = j->req_id,
			  .ticket = j->ticket,
			  .peer = j->peer,
			  .spec_from_client = from_client};
	Ofc__V1__Response *r;
	int rc = 0;

	sub.spec = xstrdup(spec);
	sub.target = xasprintf("topology %s (testbed run)", spec);
	sub.principal = j->principal ? xstrdup(j->principal) : NULL;
	ofcd_run_mutation(d, &sub);
	r = sub.reply ? ofc__v1__response__unpack(NULL, sub.reply_len, sub.reply) : NULL;
	if (!r || r->status != OFC__V1__STATUS__STATUS_OK)
		rc = ofc_error_set(
		    err,
		    r && r->status == OFC__V1__STATUS__STATUS_INVALID ? OFC_E_INPUT : OFC_E_RUNTIME,
		    "reconfiguring to %s: %s", spec, r && r->message ? r->message : "no answer");
	if (r)
		ofc__v1__response__free_unpacked(r, NULL);
	/* (the state and config after it: the run's job publishes the last) */
	if (sub.snap) {
		snapshot_free(j->snap);
		j->snap = sub.snap;
	}
	if (sub.new_cfg) {
		fabcfg_unref(j->new_cfg);
		j->new_cfg = sub.new_cfg;
	}
	free(sub.reply_buf ? sub.reply_buf : sub.reply);
	free(sub.spec);
	free(sub.target);
	free(sub.principal);
	return rc;
}
