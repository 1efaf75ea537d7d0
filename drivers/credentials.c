/* Credentials files: the user and password (or, for SSH, the private key
 * file; for TLS, the certificate and its private key files) a device's
 * login takes, read and wiped again after use.
 *
 * A daemon reads them only from its credentials directory (ofcd's
 * --credentials-dir): a file directly in it, opened through the directory
 * with O_NOFOLLOW|O_NONBLOCK, checked to be regular after the open, and
 * the directory and the file owned by root (or by the daemon's own user
 * when it is not root) and writable by nobody else. Otherwise anyone who
 * could hand ofcd a config (ApplyConfig) could have it read any file root
 * can read and send it to a device address of their choosing.
 *
 * No error message ever quotes the file's content: not a value, not a
 * key, not a line. */
#include "drivers/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CRED_FILE_MAX (64u << 10)

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = 0;
	return s;
}

static int cred_error(struct ofc_error *err, const char *path, unsigned line, const char *fmt, ...)
    OFC_PRINTF(4, 5);
static int cred_error(struct ofc_error *err, const char *path, unsigned line, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ofc_error_at(err, OFC_E_INPUT, path, line, line ? 1 : 0, "%s", msg);
	err->reason = OFC_R_CREDENTIALS;
	return -1;
}

int credentials_parse(const char *name, char *text, size_t len, struct credentials *c,
		      struct ofc_error *err)
{
	char *line, *save = NULL;
	unsigned lineno = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	if (memchr(text, 0, len))
		return cred_error(err, name, 0, "credentials file is not text");
	/* strtok_r skips empty lines, so count lines by hand. */
	for (line = text; line && rc == 0; line = save) {
		char *nl = strchr(line, '\n'), *colon, *key, *val;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = 0;
		lineno++;
		key = trim(line);
		if (!*key || *key == '#')
			continue;
		colon = strchr(key, ':');
		if (!colon) {
			rc = cred_error(err, name, lineno,
					"expected 'user: NAME' or 'password: SECRET'");
			break;
		}
		*colon = 0;
		val = trim(colon + 1);
		key = trim(key);
		char *dst = strcmp(key, "user") == 0	      ? c->user
			    : strcmp(key, "password") == 0    ? c->password
			    : strcmp(key, "private_key") == 0 ? c->key_file
			    : strcmp(key, "certificate") == 0 ? c->cert_file
							      : NULL;
		const char *what = dst == c->user	? "user"
				   : dst == c->password ? "password"
				   : dst == c->key_file ? "private_key"
							: "certificate";
		/* Neither the key nor the value is echoed: a line of a file
		 * that is not a credentials file may be anything. */
		if (!dst)
			rc =
			    cred_error(err, name, lineno,
				       "unknown key (expected 'user', 'password', 'private_key' or "
				       "'certificate')");
		else if (!*val || strlen(val) >= CRED_MAX || strpbrk(val, ":;,\""))
			rc = cred_error(err, name, lineno,
					"'%s' must be 1..%d characters without : ; , or \"", what,
					CRED_MAX - 1);
		else if ((dst == c->key_file || dst == c->cert_file) &&
			 (strchr(val, '/') || strcmp(val, ".") == 0 || strcmp(val, "..") == 0))
			rc = cred_error(err, name, lineno,
					"'%s' names a file beside the credentials file, "
					"without a '/'",
					what);
		else if (*dst)
			rc = cred_error(err, name, lineno, "'%s' given twice", what);
		else
			strcpy(dst, val);
	}
	/* SSH and TL1 log in as a user; TLS by its certificate (RFC 7589) */
	if (rc == 0 && !(c->user[0] && (c->password[0] || c->key_file[0])) &&
	    !(c->cert_file[0] && c->key_file[0]))
		rc = cred_error(err, name, 0,
				"needs 'user' and a 'password' or a 'private_key', or a "
				"'certificate' and its 'private_key' (TLS)");
	if (rc < 0)
		credentials_wipe(c);
	return rc;
}

/* Who may own the directory and the file: root, or the daemon's own user
 * when it is not root (tests, a dedicated service user). */
static const char *bad_owner_or_mode(const struct stat *st)
{
	uid_t me = geteuid();

	if (st->st_uid != 0 && st->st_uid != me)
		return me == 0 ? "is not owned by root" : "is owned by neither root nor this user";
	if (st->st_mode & (S_IWGRP | S_IWOTH))
		return "is writable by group or others";
	return NULL;
}

/* Split path into its directory and its last component. */
static int split_path(const char *path, char **dir, const char **base)
{
	const char *slash = strrchr(path, '/');

	*base = slash ? slash + 1 : path;
	if (!**base || strcmp(*base, ".") == 0 || strcmp(*base, "..") == 0)
		return -1;
	*dir = slash ? xstrndup(path, slash == path ? 1 : (size_t)(slash - path)) : xstrdup(".");
	return 0;
}

/* Open the credentials directory and check it; returns the fd. */
static int open_dir(const char *dir, struct ofc_error *err)
{
	struct stat st;
	const char *why = NULL;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return cred_error(err, dir, 0, "credentials directory %s: %s", dir,
				  strerror(errno));
	if (fstat(fd, &st) != 0 || (why = bad_owner_or_mode(&st))) {
		close(fd);
		return cred_error(err, dir, 0, "credentials directory %s %s", dir,
				  why ? why : "cannot be examined");
	}
	return fd;
}

/* Whether path names a file directly in the directory open as dfd. */
static int in_dir(int dfd, const char *path, const char *dir, struct ofc_error *err)
{
	struct stat pst, dst;
	const char *base;
	char *parent;
	int rc = 0;

	if (!path || split_path(path, &parent, &base) < 0)
		return cred_error(err, path ? path : "", 0,
				  "not a file name in the credentials directory %s", dir);
	/* The same directory, however it is spelled: compare the inodes. */
	if (stat(parent, &pst) != 0 || fstat(dfd, &dst) != 0 || pst.st_dev != dst.st_dev ||
	    pst.st_ino != dst.st_ino)
		rc = cred_error(err, path, 0,
				"outside ofcd's credentials directory %s: a daemon reads "
				"credentials only from there (ofcd --credentials-dir)",
				dir);
	free(parent);
	return rc;
}

int credentials_check_path(const char *path, const char *dir, struct ofc_error *err)
{
	int dfd = open_dir(dir, err), rc;

	if (dfd < 0)
		return -1;
	rc = in_dir(dfd, path, dir, err);
	close(dfd);
	return rc;
}

/* Read the file path names (through dir, under its rules, when dir is
 * given) into *text (at most max bytes; the caller wipes and frees it). */
static int read_secret(const char *path, const char *dir, size_t max, char **text, size_t *len,
		       struct ofc_error *err)
{
	struct stat st;
	const char *base = path, *why = NULL;
	char *parent = NULL;
	int dfd = AT_FDCWD, fd, rc;

	if (dir) {
		dfd = open_dir(dir, err);
		if (dfd < 0)
			return -1;
		if (in_dir(dfd, path, dir, err) < 0) {
			close(dfd);
			return -1;
		}
		split_path(path, &parent, &base);
		free(parent);
	}
	/* Through the directory's fd, not the name: what was checked is what
	 * is read. */
	fd = file_open_regular(dfd, base, dir ? O_NOFOLLOW : 0, err);
	if (dfd != AT_FDCWD)
		close(dfd);
	if (fd < 0) {
		snprintf(err->file, sizeof(err->file), "%s", path);
		err->reason = OFC_R_CREDENTIALS;
		return -1;
	}
	if (dir && (fstat(fd, &st) != 0 || (why = bad_owner_or_mode(&st)))) {
		close(fd);
		return cred_error(err, path, 0, "credentials file %s",
				  why ? why : "cannot be examined");
	}
	rc = read_fd(fd, path, max, text, len, err);
	close(fd);
	if (rc < 0)
		err->reason = OFC_R_CREDENTIALS;
	return rc;
}

int credentials_load(const char *path, const char *dir, struct credentials *c,
		     struct ofc_error *err)
{
	char *text = NULL;
	size_t len;
	int rc;

	memset(c, 0, sizeof(*c));
	if (!path)
		return cred_error(err, "", 0, "no credentials file configured");
	if (read_secret(path, dir, CRED_FILE_MAX, &text, &len, err) < 0)
		return -1;
	rc = credentials_parse(path, text, len, c, err);
	explicit_bzero(text, len);
	free(text);
	return rc;
}

/* The file `file` beside the credentials file path, under the same rules,
 * into *text: it must hold `mark` (else `what`, named, never quoted). */
static int load_beside(const char *path, const char *dir, const char *file, const char *mark,
		       const char *what, char **text, size_t *len, struct ofc_error *err)
{
	const char *slash = strrchr(path, '/');
	char *name = slash ? xasprintf("%.*s/%s", (int)(slash - path), path, file) : xstrdup(file);
	int rc;

	*text = NULL;
	rc = read_secret(name, dir, CRED_FILE_MAX, text, len, err);
	if (rc == 0 && (memchr(*text, 0, *len) || !strstr(*text, mark))) {
		explicit_bzero(*text, *len);
		free(*text);
		*text = NULL;
		rc = cred_error(err, name, 0, "%s", what);
	}
	free(name);
	return rc;
}

int credentials_load_key(const char *path, const char *dir, const struct credentials *c,
			 char **text, size_t *len, struct ofc_error *err)
{
	return load_beside(path, dir, c->key_file, "PRIVATE KEY-----",
			   "private key file is not a PEM or OpenSSH private key", text, len, err);
}

int credentials_load_cert(const char *path, const char *dir, const struct credentials *c,
			  char **text, size_t *len, struct ofc_error *err)
{
	return load_beside(path, dir, c->cert_file, "-----BEGIN CERTIFICATE-----",
			   "certificate file is not a PEM certificate", text, len, err);
}

void credentials_wipe(struct credentials *c)
{
	explicit_bzero(c, sizeof(*c));
}
