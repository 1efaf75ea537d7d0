/* libFuzzer: credentials files (credentials_parse). A file accepted gives
 * a user and a password the TL1 command line can carry, or a private key
 * file named without a slash (with a user, or with a certificate file
 * named so, TLS); a file refused is
 * refused in words of ofc's own, never with any of its bytes (an admin
 * could otherwise read a root-only file through an error): with the
 * numbers taken out, every message is one of a fixed few. */
#include <stdlib.h>
#include <string.h>

#include "drivers/drivers.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const known[] = {
    "credentials file is not text",
    "expected 'user: NAME' or 'password: SECRET'",
    "unknown key (expected 'user', 'password', 'private_key' or 'certificate')",
    "'user' must be .. characters without : ; , or \"",
    "'password' must be .. characters without : ; , or \"",
    "'private_key' must be .. characters without : ; , or \"",
    "'private_key' names a file beside the credentials file, without a '/'",
    "'certificate' must be .. characters without : ; , or \"",
    "'certificate' names a file beside the credentials file, without a '/'",
    "'certificate' given twice",
    "'user' given twice",
    "'password' given twice",
    "'private_key' given twice",
    "needs 'user' and a 'password' or a 'private_key', or a 'certificate' and its "
    "'private_key' (TLS)",
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct credentials c;
	struct ofc_error err = {0};
	char *text, bare[sizeof(err.msg)];
	size_t k = 0;

	if (size > 1 << 16)
		return 0;
	text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	if (credentials_parse("fuzz.cred", text, size, &c, &err) == 0) {
		if ((!(c.user[0] && (c.password[0] || c.key_file[0])) &&
		     !(c.cert_file[0] && c.key_file[0])) ||
		    strpbrk(c.user, ":;,\"") || strpbrk(c.password, ":;,\"") ||
		    strpbrk(c.key_file, ":;,\"/") || strpbrk(c.cert_file, ":;,\"/") ||
		    strlen(c.user) >= CRED_MAX || strlen(c.password) >= CRED_MAX ||
		    strlen(c.key_file) >= CRED_MAX || strlen(c.cert_file) >= CRED_MAX)
			abort();
		credentials_wipe(&c);
	} else {
		bool ok = false;

		for (const char *p = err.msg; *p; p++)
			if (*p < '0' || *p > '9')
				bare[k++] = *p;
		bare[k] = 0;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= strcmp(bare, known[i]) == 0;
		if (!ok || err.reason != OFC_R_CREDENTIALS || c.password[0] || c.user[0])
			abort();
	}
	free(text);
	return 0;
}
