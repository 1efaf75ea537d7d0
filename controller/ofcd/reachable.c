/* What the published state says of a device's reachability, on the loop
 * thread: set by the leader's reads (a transaction's or a probe's events)
 * and, on a follower, by the leader's word in the event log
 * (event_log.c); its own file because both events.c and event_log.c
 * set it. */
#include "controller/ofcd/conn.h"

#include <string.h>

/* The index of device `name` in the snapshot, or -1. */
int ofcd_snap_dev(struct snapshot *s, const char *name)
{
	for (uint32_t i = 0; name && i < s->ndevs; i++)
		if (strcmp(s->devs[i]->name, name) == 0)
			return (int)i;
	return -1;
}

/* error: the device's text (root and the admin group see it); reason:
 * what read-only clients see instead. */
void ofcd_set_reachable(struct ofcd *d, int i, bool up, const char *error, enum ofc_reason reason)
{
	Ofc__V1__DeviceState *m;

	if (i < 0)
		return;
	m = d->loop->snap->devs[i];
	m->has_reachable = 1;
	m->reachable = up;
	m->error = up || !error ? NULL : arena_strdup(&d->loop->snap->a, error);
	d->loop->snap->public_error[i] = m->error ? ofcd_public_reason(reason) : NULL;
	changed(d);
}
