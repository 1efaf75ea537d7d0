/* TestbedUp: the testbed brought up by the daemon that drives its hosts
 * (testbed_bring_up, as `ofc testbed up FILE` does), so that a script
 * with ofcd running need not stop it first nor start it after. The
 * namespaces are made for the circuits the switches hold now; the
 * worker's ctl is opened again with the hosts among its devices, so its
 * probes read them and its next transactions move their circuits with
 * the switches. An admin's mutation on the mutation worker: no
 * transaction moves the circuits while they are made. The loop's side
 * (the request checked and queued) is mutation_requests.c's. */
#include "controller/ofcd/answer.h"
#include "controller/ofcd/testbed.h"
#include "controller/ofcd/worker.h"
#include "controller/testbed/testbed.h"

#include <stdlib.h>

/* The worker's ctl opened again on the same fabric, now with (or
 * without) the testbed's hosts as a device: ctl_open adds them when a
 * testbed is up. On failure the old one stays, said in the log: the next
 * transaction opens its own and sees the hosts then. */
void ofcd_testbed_reopen_ctl(struct ofcd *d)
{
	struct ofc_error err = {0};
	struct ctl *nc;

	if (ofcd_open_next_ctl(d, d->w->ctl->fabric, &nc, &err) < 0) {
		ofcd_log_error(d, "testbed: the devices not opened again: ", &err);
		return;
	}
	ofcd_ctl_close(d, d->w->ctl);
	d->w->ctl = nc;
	ctl_quiet(nc, NULL);
}

/* (mutation worker) JOB_TESTBED_UP: OK once the namespaces exist and what
 * their circuits carry was measured; FAILED with the reason otherwise
 * (the answer too when the namespaces exist and only the measure
 * failed). */
void ofcd_run_testbed_up(struct ofcd *d, struct job *j)
{
	const struct fabric *f = d->w->ctl->fabric;
	const struct device_state **switches = NULL;
	struct testbed_up_result r = {0};
	struct ofc_error err = {0};
	struct answer an;
	char why[512];
	int rc = -1;

	answer_init(&an, j);
	an.t.kind = "testbed-up";
	/* the switches as they are: what the hosts' circuits mirror */
	if (testbed_need_root(&err) == 0 && ctl_read(d->w->ctl, &err) == 0) {
		switches = ctl_switch_states(d->w->ctl);
		rc = testbed_bring_up(f, d->state_dir, switches, j->rate_scale, &r, &err);
		free(switches);
	}
	if (r.up) {
		/* the agents report here: to this replica, which leads */
		testbed_agents_start(f, d->state_dir,
				     d->o.advertise_socket ? d->o.advertise_socket
				     : d->o.inherit_fds	   ? NULL
							   : d->o.socket_path,
				     &r);
		ofcd_testbed_reopen_ctl(d);
		an.r.body_case = OFC__V1__RESPONSE__BODY_TESTBED_UP;
		an.r.testbed_up = testbed_up_answer(&an.a, f->name, &r);
		/* State.testbed_up and the hosts' device, published */
		j->snap = snapshot_build(d, d->state_dir, d->w->ctl, d->w->pub, why, sizeof(why));
		held_state(d, j->snap);
		if (why[0])
			ofcd_log(d, OFCD_LOG_WARNING, "%s", why);
	}
	if (rc < 0) {
		answer_status(&an,
			      err.code == OFC_E_INPUT ? OFC__V1__STATUS__STATUS_INVALID
						      : OFC__V1__STATUS__STATUS_FAILED,
			      "%s", err.msg);
		an.t.state = r.up ? "failed" : "refused";
	} else {
		answer_status(&an, OFC__V1__STATUS__STATUS_OK,
			      "testbed %s up: %u hosts as namespaces ofc-%s-*, %u circuits",
			      f->name, r.hosts, f->name, r.circuits);
		an.t.state = "done";
	}
	j->outcome = an.t.state;
	response_pack(&an.r, &j->reply, &j->reply_len);
	arena_free(&an.a);
}
