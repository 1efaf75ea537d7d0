/* The files backend of the store (store.h): STATE_DIR/FABRIC.state,
 * .journal, .failed, .rewired and .held. Each write replaces a file
 * whole (atomic_write: temp file, fsync, rename, fsync the directory), so
 * a crash leaves the old file or the new one; a batch is written in its
 * order, one file at a time. */
#include "controller/reconfig/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

struct files_store {
	struct store s;
	const char *dir;
};

char *ctl_path(const char *state_dir, const char *fabric, const char *ext)
{
	return xasprintf("%s/%s.%s", state_dir, fabric, ext);
}

static const char *const exts[STORE_NITEMS] = {
    [STORE_RECORD] = "state",	   [STORE_JOURNAL] = "journal", [STORE_FAILED] = "failed",
    [STORE_REWIRED] = "rewired",   [STORE_QUEUE] = "queue",	[STORE_HELD] = "held",
    [STORE_OUTCOMES] = "outcomes", [STORE_EVENTS] = "events",	[STORE_SCHEDULE] = "schedule",
    [STORE_LOST] = "lost",	   [STORE_DRAINED] = "drained", [STORE_STAGED] = "staged",
};

static const char *dir_of(const struct store *s)
{
	return ((const struct files_store *)s)->dir;
}

static char *files_where(const struct store *s, const char *fabric, enum store_item it)
{
	return ctl_path(dir_of(s), fabric, exts[it]);
}

static int files_get(struct store *s, const char *fabric, enum store_item it, size_t max,
		     char **data, size_t *len, bool *missing, struct ofc_error *err)
{
	char *path = files_where(s, fabric, it);
	struct stat st;
	int rc = 0;

	if (access(path, F_OK) != 0 && errno == ENOENT) {
		*missing = true;
		free(path);
		return 0;
	}
	/* (read_file checks what it opened too; this says what it is.) */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0, "is not a regular file (%s)",
			     S_ISDIR(st.st_mode)    ? "a directory"
			     : S_ISFIFO(st.st_mode) ? "a FIFO"
						    : "a socket or a device node");
		err->reason = OFC_R_GARBAGE;
		rc = -1;
	} else if (read_file(path, max, data, len, err) < 0) {
		err->code = OFC_E_RUNTIME; /* the state directory, not the user's input */
		rc = -1;
	}
	free(path);
	return rc;
}

static int files_write(struct store *s, const char *fabric, const struct store_write *w, uint32_t n,
		       struct ofc_error *err)
{
	for (uint32_t i = 0; i < n; i++) {
		char *path = files_where(s, fabric, w[i].item);
		int rc = 0;

		if (w[i].data)
			rc = atomic_write(path, w[i].data, w[i].len, err);
		else if (unlink(path) != 0 && errno != ENOENT)
			rc = ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0, "cannot remove: %s",
					  strerror(errno));
		free(path);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static char *files_aside(const struct store *s, const char *fabric, enum store_item it,
			 const char *suffix)
{
	char *path = files_where(s, fabric, it);
	char *cmd = xasprintf("mv '%s' '%s%s'", path, path, suffix);

	free(path);
	return cmd;
}

/* The fabric's lock is held by someone (the journal's writer, as far as
 * a lock can tell: ofcd holds it for its whole life). */
static bool files_writer_alive(struct store *s, const char *fabric, uint32_t pid, uint64_t epoch)
{
	char *path = ctl_path(dir_of(s), fabric, "lock");
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	bool held = false;
	struct stat st;

	(void)pid;
	(void)epoch;
	free(path);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	if (flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK)
		held = true;
	close(fd);
	return held;
}

static void files_close(struct store *s)
{
	free(s);
}

static const struct store_ops files_ops = {
    .name = "files",
    .noun = "file",
    .get = files_get,
    .write = files_write,
    .where = files_where,
    .aside = files_aside,
    .writer_alive = files_writer_alive,
    .state_dir = dir_of,
    .close = files_close,
};

struct store *store_open_files(const char *state_dir)
{
	struct files_store *fs = xcalloc(1, sizeof(*fs));

	fs->s.ops = &files_ops;
	fs->dir = state_dir;
	return &fs->s;
}
