/* Reading inputs with a size limit; writing outputs atomically. Every
 * input is opened non-blocking and checked to be a regular file once open,
 * so a FIFO or a device in a file's place is refused instead of blocking
 * the reader (a daemon's worker, a command) for ever. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int file_open_regular(int dirfd, const char *path, int flags, struct ofc_error *err)
{
	struct stat st;
	int fd = openat(dirfd, path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | flags);

	if (fd < 0) {
		int e = errno;

		/* O_NOFOLLOW on a symbolic link fails with ELOOP: say what it is. */
		if (e == ELOOP && (flags & O_NOFOLLOW))
			return ofc_error_at(err, OFC_E_INPUT, path, 0, 0,
					    "is a symbolic link (not followed here)");
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "cannot open: %s", strerror(e));
	}
	/* Checked on what was opened, not on the name: the name may have
	 * changed between a stat and the open. */
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		bool dir = S_ISDIR(st.st_mode);

		close(fd);
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0,
				    dir ? "is a directory" : "is not a regular file");
	}
	return fd;
}

int read_fd(int fd, const char *name, size_t max, char **data, size_t *len, struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];

	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n == 0)
			break;
		if (n < 0) {
			int e = errno;

			if (e == EINTR)
				continue;
			sb_free(&sb);
			return ofc_error_at(err, OFC_E_INPUT, name, 0, 0, "read error: %s",
					    strerror(e));
		}
		if (sb.len + (size_t)n > max) {
			if (sb.buf)
				explicit_bzero(sb.buf, sb.len);
			sb_free(&sb);
			return ofc_error_at(err, OFC_E_INPUT, name, 1, 1,
					    "file too large (limit %zu bytes)", max);
		}
		sb_add(&sb, chunk, (size_t)n);
	}
	explicit_bzero(chunk, sizeof(chunk));
	*len = sb.len;
	*data = sb_detach(&sb);
	return 0;
}

int read_file(const char *path, size_t max, char **data, size_t *len, struct ofc_error *err)
{
	int fd, rc;

	if (strcmp(path, "-") == 0)
		return read_fd(STDIN_FILENO, path, max, data, len, err);
	fd = file_open_regular(AT_FDCWD, path, 0, err);
	if (fd < 0)
		return -1;
	rc = read_fd(fd, path, max, data, len, err);
	close(fd);
	return rc;
}

int atomic_open(struct atomic_file *af, const char *path, struct ofc_error *err)
{
	int fd;

	memset(af, 0, sizeof(*af));
	af->path = xstrdup(path);
	if (strcmp(path, "-") == 0) {
		af->f = stdout;
		return 0;
	}
	af->tmp = xasprintf("%s.tmp.XXXXXX", path);
	fd = mkstemp(af->tmp);
	if (fd < 0) {
		int e = errno;

		free(af->tmp);
		free(af->path);
		memset(af, 0, sizeof(*af));
		return ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0, "cannot create: %s",
				    strerror(e));
	}
	fchmod(fd, 0644);
	af->f = fdopen(fd, "wb");
	if (!af->f) {
		close(fd);
		atomic_abort(af);
		return ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0, "fdopen failed");
	}
	return 0;
}

static void fsync_dir(const char *path)
{
	char *copy = xstrdup(path);
	int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY);

	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	free(copy);
}

int atomic_commit(struct atomic_file *af, struct ofc_error *err)
{
	int e = 0;

	if (!af->tmp) { /* stdout */
		if (fflush(af->f) != 0)
			e = errno;
		free(af->path);
		memset(af, 0, sizeof(*af));
		if (e)
			return ofc_error_set(err, OFC_E_RUNTIME, "writing to stdout: %s",
					     strerror(e));
		return 0;
	}
	if (fflush(af->f) != 0 || ferror(af->f) || fsync(fileno(af->f)) != 0)
		e = errno ? errno : EIO;
	if (fclose(af->f) != 0 && !e)
		e = errno;
	af->f = NULL;
	if (!e && rename(af->tmp, af->path) != 0)
		e = errno;
	if (e) {
		ofc_error_at(err, OFC_E_RUNTIME, af->path, 0, 0, "cannot write: %s", strerror(e));
		atomic_abort(af);
		return -1;
	}
	fsync_dir(af->path);
	free(af->tmp);
	free(af->path);
	memset(af, 0, sizeof(*af));
	return 0;
}

void atomic_abort(struct atomic_file *af)
{
	if (af->tmp) {
		if (af->f)
			fclose(af->f);
		unlink(af->tmp);
	}
	free(af->tmp);
	free(af->path);
	memset(af, 0, sizeof(*af));
}

int atomic_write(const char *path, const void *data, size_t len, struct ofc_error *err)
{
	struct atomic_file af;

	if (atomic_open(&af, path, err) < 0)
		return -1;
	if (len && fwrite(data, 1, len, af.f) != len) {
		atomic_abort(&af);
		return ofc_error_at(err, OFC_E_RUNTIME, path, 0, 0, "short write");
	}
	return atomic_commit(&af, err);
}
