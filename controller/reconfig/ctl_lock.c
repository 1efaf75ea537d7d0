/* The fabric's lock (DESIGN.md §5): one changer at a time, ofcd or an
 * ofc, by an flock on STATE_DIR/FABRIC.lock that names its holder (its pid,
 * and ofcd's socket), so that the one refused can say where to go. */
#include "controller/reconfig/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
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
	return 0;
}
