/* What ofcd_open does before it serves, apart from the loop's own
 * set-up: a Unix socket bound (a stale one from a crash replaced, a live
 * one never), the directory a socket goes in checked first, the file
 * descriptors the clients need, the read-only socket's budgets, and
 * --topology-dir held open after its owner and mode are checked. */
#include "controller/ofcd/conn.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

int listen_unix(const char *path, unsigned mode, int gid, int *out, struct ofc_error *err)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct stat st;
	mode_t old;
	int fd;

	*out = -1;
	if (strlen(path) >= sizeof(sa.sun_path))
		return ofc_error_set(err, OFC_E_USAGE, "socket path too long: %s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return ofc_error_set(err, OFC_E_RUNTIME, "%s exists and is not a socket",
					     path);
		/* A socket nobody answers on is left over from a crash. */
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(fd);
			return ofc_error_set(err, OFC_E_RUNTIME,
					     "another ofcd is serving %s already", path);
		}
		if (fd >= 0)
			close(fd);
		unlink(path);
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ofc_error_set(err, OFC_E_RUNTIME, "socket: %s", strerror(errno));
	/* Created private, then opened up: no moment with a wider mode. */
	old = umask(0177);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		umask(old);
		close(fd);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot bind %s: %s", path, strerror(e));
	}
	umask(old);
	if ((gid >= 0 && chown(path, (uid_t)-1, (gid_t)gid) != 0) || chmod(path, mode) != 0 ||
	    listen(fd, 128) != 0) {
		int e = errno;

		close(fd);
		unlink(path);
		return ofc_error_set(err, OFC_E_RUNTIME, "cannot set up %s: %s", path, strerror(e));
	}
	*out = fd;
	return 0;
}

/* Where a socket will be bound: its directory must exist and take a new
 * file. Checked before the lock is taken and the state directory made, so
 * that a start refused for a missing /run/ofc leaves nothing behind, and
 * the error names the option that moves it. */
int check_socket_dir(const char *path, const char *option, struct ofc_error *err)
{
	const char *slash = strrchr(path, '/');
	char *dir =
	    slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	struct stat st;
	int rc = 0;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		rc = ofc_error_set(err, OFC_E_USAGE,
				   "%s %s: no directory %s (create it, or give %s a path in a "
				   "directory that exists)",
				   option, path, dir, option);
	else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
		rc = ofc_error_set(err, OFC_E_USAGE,
				   "%s %s: cannot create a socket in %s: %s (give %s a path in a "
				   "directory this user may write)",
				   option, path, dir, strerror(errno), option);
	free(dir);
	return rc;
}

/* Descriptors for max_clients clients, a session per device and the
 * daemon's own (OFCD_FDS_RESERVED): raise the soft RLIMIT_NOFILE as far as
 * the hard one allows, and say so when even that is short. Past the limit
 * clients wait in the backlog (accept_backoff); nothing breaks. */
void fd_limit(struct ofcd *d)
{
	const struct fabric *f = d->loop->cfg->f;
	rlim_t need = (rlim_t)d->o.max_clients + f->nswitches + f->nrings + OFCD_FDS_RESERVED;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= need)
		return;
	if (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= need) {
		rl.rlim_cur = need;
		if (setrlimit(RLIMIT_NOFILE, &rl) == 0)
			return;
	} else {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	ofcd_log(d, OFCD_LOG_WARNING,
		 "--max-clients %u needs %llu file descriptors, the limit is %llu (LimitNOFILE= "
		 "or ulimit -n): beyond about %llu clients, new ones wait",
		 d->o.max_clients, (unsigned long long)need, (unsigned long long)rl.rlim_cur,
		 rl.rlim_cur > need - d->o.max_clients
		     ? (unsigned long long)(rl.rlim_cur - (need - d->o.max_clients))
		     : 0ull);
}

/* The read-only socket's budget: what was asked, else the smaller
 * defaults, and never more than the main socket's (< 0: none). */
void ro_budget(struct ofcd_opts *o)
{
	if (!o->ro_max_request_memory)
		o->ro_max_request_memory = mem_physical() / 8;
	if (o->ro_max_request_memory > o->max_request_memory)
		o->ro_max_request_memory = o->max_request_memory;
	if (!o->ro_max_request_time)
		o->ro_max_request_time = OFCD_RO_REQUEST_TIME_DEFAULT;
	if (o->max_request_time > 0 &&
	    (o->ro_max_request_time < 0 || o->ro_max_request_time > o->max_request_time))
		o->ro_max_request_time = o->max_request_time;
}

/* --topology-dir: held open (O_PATH) for topo_build_in, under its real
 * name so that absolute names in requests compare with it. Like sshd's
 * StrictModes: a directory others may write to is refused, since anyone
 * who can plant a symbolic link there could point ofcd at any file. */
int open_topology_dir(struct ofcd *d, struct ofc_error *err)
{
	const char *dir = d->o.topology_dir;
	struct stat st;
	char *real;

	if (!dir || !*dir)
		return 0;
	real = realpath(dir, NULL);
	if (!real)
		return ofc_error_set(err, OFC_E_USAGE, "--topology-dir %s: %s", dir,
				     strerror(errno));
	d->files.dirfd = open(real, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (d->files.dirfd < 0 || fstat(d->files.dirfd, &st) != 0) {
		int e = errno;

		free(real);
		return ofc_error_set(err, OFC_E_USAGE, "--topology-dir %s: %s", dir, strerror(e));
	}
	if ((st.st_uid != 0 && st.st_uid != geteuid()) || (st.st_mode & 022)) {
		ofc_error_set(err, OFC_E_USAGE,
			      "--topology-dir %s: owned by uid %u, mode %04o: it must belong to "
			      "root (or ofcd's user) and be closed to writes by group and others "
			      "(chmod go-w %s)",
			      dir, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777), real);
		free(real);
		return -1;
	}
	d->topo_dir = real;
	d->files.dir = real;
	return 0;
}
