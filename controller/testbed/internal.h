/* Private to controller/testbed/: the state directory's two files, shared
 * by hosts.c (which reads and writes them) and testbed.c (up and down),
 * and the notes of `testbed up` (written by up.c and agents.c). */
#ifndef OFC_CONTROLLER_TESTBED_INTERNAL_H
#define OFC_CONTROLLER_TESTBED_INTERNAL_H

#include "controller/testbed/testbed.h"

/* <state_dir>/<fabric>.<ext>, the testbed's own files (.testbed, .links):
 * always files beside the store's, whatever the store, since the
 * namespaces they name are this machine's (hosts.c). */
char *testbed_path(const char *state_dir, const char *fabric, const char *ext);
/* Recording the shaping `testbed up` chose (testbed_links_recorded reads
 * it). */
int testbed_links_write(const char *state_dir, const char *fabric, const struct testbed_links *l,
			struct ofc_error *err);
/* A line of what `testbed up` did beside its circuits (the shaping, the
 * agents), kept in r's notes while they have room (answer.c, beside the
 * answer they go into). */
void testbed_up_note(struct testbed_up_result *r, const char *fmt, ...) OFC_PRINTF(2, 3);

#endif
