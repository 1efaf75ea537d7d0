/* The fabric's lock (DESIGN.md §5): one changer at a time, ofcd or an
 * ofc, by an flock on STATE_DIR/FABRIC.lock that names its holder (its pid,
 * and ofcd's socket), so that the one refused can say where to go. */
#include "controller/reconfig/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The lock taken: by ofcd (its second line "ofcd SOCKET"), whose socket
 * is the way to change the fabric now, or by another ofc, which ends. */
static int lock_busy(const struct ctl *c, char *held, struct ofc_error *err)
{
	char *nl = strchr(held, '\n'), *sock = NULL;

	if (nl) {
		*nl = 0;
		if (strncmp(nl + 1, "ofcd ", 5) == 0) {
			sock = nl + 6;
			sock[strcspn(sock, "\n")] = 0;
		}
	}
	if (sock && *sock)
		return ofc_error_set(err, OFC_E_RUNTIME,
				     "fabric '%s' is held by ofcd (pid %s), which changes its "
				     "devices: use `ofc --socket %s %s`%s",
				     c->fabric->name, held[0] ? held : "?", sock,
				     c->opts.daemon_ask ? c->opts.daemon_ask : "apply",
				     c->opts.daemon_ask ? "" : " (or reconfigure)");
	return ofc_error_set(err, OFC_E_RUNTIME,
			     "fabric '%s' is being changed by another ofc (pid %s); try "
			     "again when it has finished",
			     c->fabric->name, held[0] ? held : "?");
}

/* Locks the ctls of this process hold now. */
static atomic_uint locks_held;

/* The lock taken on fd. One whose writer is a process that is gone, or
 * this one while none of its ctls holds a lock (it closed the one that
 * wrote it), is held only by a child forked while it was open, until that
 * child's exec closes it (O_CLOEXEC): waited for, 2 s at most. */
static bool lock_take(int fd)
{
	double until = now_seconds() + 2.0;

	for (;;) {
		char buf[32] = "";

		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return true;
		long pid = pread(fd, buf, sizeof(buf) - 1, 0) > 0 ? strtol(buf, NULL, 10) : 0;
		bool mine = pid == (long)getpid();

		if (pid <= 0 || now_seconds() > until || (mine && atomic_load(&locks_held)) ||
		    (!mine && (kill((pid_t)pid, 0) == 0 || errno != ESRCH)))
			return false;
		usleep(10000);
	}
}

void ctl_unlock(struct ctl *c)
{
	if (c->lock_fd < 0)
		return;
	close(c->lock_fd); /* releases the flock */
	c->lock_fd = -1;
	atomic_fetch_sub(&locks_held, 1);
}

int ctl_lock(struct ctl *c, struct ofc_error *err)
{
	char *path = ctl_path(c->state_dir, c->fabric->name, "lock");
	char buf[PATH_MAX + 32];
	int fd;

	if (c->lock_fd >= 0) {
		free(path);
		return 0;
	}
	/* Non-blocking, then checked: a FIFO in the lock's place must not
	 * hang the opener. */
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
	if (fd < 0) {
		ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0, "cannot open the lock: %s",
			     strerror(errno));
		free(path);
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0,
			     "the lock is not a regular file: remove it (rm '%s')", path);
		free(path);
		return -1;
	}
	if (!lock_take(fd)) {
		ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

		buf[n > 0 ? n : 0] = 0;
		close(fd);
		free(path);
		return lock_busy(c, buf, err);
	}
	free(path);
	int len = c->opts.daemon_socket ? snprintf(buf, sizeof(buf), "%d\nofcd %s\n", (int)getpid(),
						   c->opts.daemon_socket)
					: snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (len < 0 || (size_t)len >= sizeof(buf))
		len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, buf, (size_t)len, 0);
	c->lock_fd = fd;
	atomic_fetch_add(&locks_held, 1);
	return 0;
}
