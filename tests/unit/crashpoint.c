/* Crash points for the unit tests (crashpoint.h). */
#include "tests/unit/crashpoint.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void hook(void *ctx, uint64_t command)
{
	struct crash_point *cp = ctx;

	if (!cp->taken && command == cp->at)
		crash_take(cp);
}

void crash_arm(struct crash_point *cp, const char *dir, struct sim_device *sim, uint64_t at)
{
	memset(cp, 0, sizeof(*cp));
	cp->dir = xstrdup(dir);
	cp->sim = sim;
	cp->at = at;
	state_init(&cp->state, DEV_SWITCH);
	sim->before_command = hook;
	sim->hook_ctx = cp;
}

static bool regular(const char *dir, const char *name)
{
	char *path = xasprintf("%s/%s", dir, name);
	struct stat st;
	bool yes = lstat(path, &st) == 0 && S_ISREG(st.st_mode);

	free(path);
	return yes;
}

void crash_take(struct crash_point *cp)
{
	DIR *d = opendir(cp->dir);
	struct dirent *de;

	cp->taken = true;
	state_copy(&cp->state, &cp->sim->state);
	while (d && (de = readdir(d))) {
		struct ofc_error err = {0};
		struct crash_file f = {0};
		char *path;

		if (!regular(cp->dir, de->d_name))
			continue;
		path = xasprintf("%s/%s", cp->dir, de->d_name);
		if (read_file(path, 64u << 20, &f.data, &f.len, &err) == 0) {
			f.name = xstrdup(de->d_name);
			cp->files = xreallocarray(cp->files, cp->nfiles + 1, sizeof(*cp->files));
			cp->files[cp->nfiles++] = f;
		}
		free(path);
	}
	if (d)
		closedir(d);
}

const struct crash_file *crash_file(const struct crash_point *cp, const char *name)
{
	for (uint32_t i = 0; i < cp->nfiles; i++)
		if (strcmp(cp->files[i].name, name) == 0)
			return &cp->files[i];
	return NULL;
}

void crash_restore(struct crash_point *cp)
{
	DIR *d = opendir(cp->dir);
	struct dirent *de;

	cp->sim->before_command = NULL;
	cp->sim->hook_ctx = NULL;
	while (d && (de = readdir(d))) {
		if (regular(cp->dir, de->d_name) && !crash_file(cp, de->d_name)) {
			char *path = xasprintf("%s/%s", cp->dir, de->d_name);

			unlink(path);
			free(path);
		}
	}
	if (d)
		closedir(d);
	for (uint32_t i = 0; i < cp->nfiles; i++) {
		char *path = xasprintf("%s/%s", cp->dir, cp->files[i].name);
		struct ofc_error err = {0};

		if (atomic_write(path, cp->files[i].data, cp->files[i].len, &err) < 0)
			abort(); /* the test's own directory: nothing to go on with */
		free(path);
	}
	state_copy(&cp->sim->state, &cp->state);
}

void crash_free(struct crash_point *cp)
{
	if (cp->sim && cp->sim->hook_ctx == cp) {
		cp->sim->before_command = NULL;
		cp->sim->hook_ctx = NULL;
	}
	for (uint32_t i = 0; i < cp->nfiles; i++) {
		free(cp->files[i].name);
		free(cp->files[i].data);
	}
	free(cp->files);
	free(cp->dir);
	state_free(&cp->state);
	memset(cp, 0, sizeof(*cp));
}
