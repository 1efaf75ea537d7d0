/* Credentials files: the user and password a device's login takes, read
 * and wiped again after use. */
#include "drivers/internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int credentials_load(const char *path, struct credentials *c, struct ofc_error *err)
{
	char *text, *line, *save = NULL;
	size_t len;
	unsigned lineno = 0;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	if (!path)
		return ofc_error_set(err, OFC_E_INPUT, "no credentials file configured");
	if (read_file(path, 64 * 1024, &text, &len, err) < 0)
		return -1;
	if (memchr(text, 0, len)) {
		free(text);
		return ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "credentials file is not text");
	}
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
			rc = ofc_error_at(err, OFC_E_INPUT, path, lineno, 1,
					  "expected 'user: NAME' or 'password: SECRET'");
			break;
		}
		*colon = 0;
		val = trim(colon + 1);
		key = trim(key);
		char *dst = strcmp(key, "user") == 0	   ? c->user
			    : strcmp(key, "password") == 0 ? c->password
							   : NULL;
		if (!dst) {
			rc = ofc_error_at(err, OFC_E_INPUT, path, lineno, 1,
					  "unknown key '%.40s' (expected user or password)", key);
		} else if (!*val || strlen(val) >= CRED_MAX || strpbrk(val, ":;,\"")) {
			/* Never echo the value: it may be the secret. */
			rc = ofc_error_at(err, OFC_E_INPUT, path, lineno, 1,
					  "'%s' must be 1..%d characters without : ; , or \"", key,
					  CRED_MAX - 1);
		} else {
			strcpy(dst, val);
		}
	}
	explicit_bzero(text, len);
	free(text);
	if (rc == 0 && (!c->user[0] || !c->password[0]))
		rc = ofc_error_at(err, OFC_E_INPUT, path, 0, 0, "needs both 'user' and 'password'");
	if (rc < 0)
		credentials_wipe(c);
	return rc;
}

void credentials_wipe(struct credentials *c)
{
	explicit_bzero(c, sizeof(*c));
}
