/* A kill -9 at a chosen moment, in process (tests/unit/crashpoint.c): the
 * state directory's files and a sim device's state are copied when the sim
 * device is about to carry out command `at` (drivers.h before_command);
 * the test lets the process go on, then puts the copy back, which is what
 * the process would have left had it been killed there, and runs the
 * repair or restart it wants to check. */
#ifndef OFC_TESTS_UNIT_CRASHPOINT_H
#define OFC_TESTS_UNIT_CRASHPOINT_H

#include "drivers/drivers.h"

struct crash_file {
	char *name;
	char *data;
	size_t len;
};

struct crash_point {
	char *dir;
	struct sim_device *sim;
	uint64_t at; /* the sim's command number (sim->commands counts on) */
	bool taken;
	struct crash_file *files; /* the directory's regular files, then */
	uint32_t nfiles;
	struct device_state state; /* the sim device's, then */
};

/* Copy dir and sim's state just before sim's command `at`. */
void crash_arm(struct crash_point *cp, const char *dir, struct sim_device *sim, uint64_t at);
/* Copy them now (a moment with no device command: before or after). */
void crash_take(struct crash_point *cp);
/* Put the copy back: the regular files of dir become the copied ones (those
 * not there then are removed), the sim device holds what it held. The hook
 * is removed. */
void crash_restore(struct crash_point *cp);
void crash_free(struct crash_point *cp);
/* The copied file `name` (NULL when it was not there). */
const struct crash_file *crash_file(const struct crash_point *cp, const char *name);

#endif
