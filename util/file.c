/* Reading inputs with a size limit; writing outputs atomically. */
#include "util/util.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int read_file(const char *path, size_t max, char **data, size_t *len, struct ofc_error *err)
{
	struct strbuf sb = STRBUF_INIT;
	char chunk[65536];
	struct stat st;
	FILE *f;
	size_t n;

	f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	if (!f)
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "cannot open: %s",
				    strerror(errno));
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "is a directory");
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
		if (sb.len + n > max) {
			if (f != stdin)
				fclose(f);
			sb_free(&sb);
			return ofc_error_at(err, OFC_E_INPUT, path, 1, 1,
					    "file too large (limit %zu bytes)", max);
		}
		sb_add(&sb, chunk, n);
	}
	if (ferror(f)) {
		int e = errno;

		if (f != stdin)
			fclose(f);
		sb_free(&sb);
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "read error: %s", strerror(e));
	}
	if (f != stdin)
		fclose(f);
	*len = sb.len;
	*data = sb_detach(&sb);
	return 0;
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
