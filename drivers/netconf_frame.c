/* RFC 6242 framing read as the bytes come, for the relay
 * (netconf_relay.c): where each message ends, exactly, so that libnetconf2
 * is handed whole messages and a reader can tell when one is in whole.
 *
 * A session starts with end-of-message framing: each side's hello ends
 * with "]]>]]>". If both hellos offer :base:1.1, the rest is chunked
 * (RFC 6242 4.2): "\n#SIZE\n" then SIZE bytes, repeated, and "\n##\n" ends
 * the message; SIZE is 1 to 4294967295, written without a leading zero.
 * Else "]]>]]>" ends every message (base:1.0). Which one follows the hello
 * is known only once the other side's hello is read too: the scanner stops
 * there (NCF_WAIT) until told (ncframe_decide).
 *
 * This reads framing only, not XML: a hello offers :base:1.1 when its
 * bytes hold the capability's URN; libnetconf2 parses the hello itself.
 */
#include "drivers/drivers.h"

#include <string.h>

#define EOM	"]]>]]>"
#define BASE11	"urn:ietf:params:netconf:base:1.1"
#define SIZEMAX 4294967295ull

enum { C_LF, C_HASH, C_FIRST, C_SIZE, C_DATA, C_ENDLF };

/* KMP's failure function of "]]>]]>" (a match that fails may keep a
 * prefix: "]]]>]]>" ends where it should); the URN's first letter occurs
 * once in it, so a failed match keeps nothing. */
static const uint8_t eom_fail[] = {0, 1, 0, 1, 2, 3};

static unsigned match(const char *pat, const uint8_t *fail, unsigned m, char c)
{
	while (m && pat[m] != c)
		m = fail ? fail[m - 1] : 0;
	return pat[m] == c ? m + 1 : 0;
}

void ncframe_init(struct ncframe *f, uint64_t max)
{
	memset(f, 0, sizeof(*f));
	f->max = max;
}

void ncframe_decide(struct ncframe *f, bool peer_base11)
{
	if (f->mode == NCF_WAIT)
		f->mode = f->base11 && peer_base11 ? NCF_CHUNKED : NCF_EOM;
}

void ncframe_restart(struct ncframe *f)
{
	f->st = C_LF;
	f->eom = 0;
	f->chunks = 0;
	f->num = 0;
	f->size = 0;
	f->error = NULL;
}

static int fail(struct ncframe *f, int rc, const char *why)
{
	f->error = why;
	return rc;
}

/* One byte of end-of-message framing: 1 when it ends the message. */
static int eom_byte(struct ncframe *f, char c)
{
	f->eom = (uint8_t)match(EOM, eom_fail, f->eom, c);
	if (f->mode == NCF_HELLO && f->cap < sizeof(BASE11) - 1) {
		f->cap = (uint8_t)match(BASE11, NULL, f->cap, c);
		if (f->cap == sizeof(BASE11) - 1)
			f->base11 = true;
	}
	if (f->eom < sizeof(EOM) - 1)
		return 0;
	f->eom = 0;
	return 1;
}

/* One byte of a chunk's header or of the end of chunks: 1 when it ends
 * the message, -1 when it is not chunked framing. */
static int chunk_byte(struct ncframe *f, char c)
{
	switch (f->st) {
	case C_LF:
		f->st = C_HASH;
		return c == '\n' ? 0 : fail(f, -1, "a chunk does not start with \\n#");
	case C_HASH:
		f->st = C_FIRST;
		return c == '#' ? 0 : fail(f, -1, "a chunk does not start with \\n#");
	case C_FIRST:
		if (c == '#') {
			f->st = C_ENDLF;
			return f->chunks ? 0 : fail(f, -1, "a message of no chunk");
		}
		if (c < '1' || c > '9')
			return fail(f, -1, "a chunk's size is not a number from 1");
		f->num = (uint64_t)(c - '0');
		f->st = C_SIZE;
		return 0;
	case C_SIZE:
		if (c == '\n') {
			f->st = C_DATA;
			f->chunks++;
			return 0;
		}
		if (c < '0' || c > '9')
			return fail(f, -1, "a chunk's size is not a number from 1");
		f->num = f->num * 10 + (uint64_t)(c - '0');
		return f->num <= SIZEMAX ? 0 : fail(f, -1, "a chunk's size over 4294967295");
	default: /* C_ENDLF */
		if (c != '\n')
			return fail(f, -1, "the end of chunks is not \\n##\\n");
		f->st = C_LF;
		f->chunks = 0;
		return 1;
	}
}

/* The bytes the message has so far, and those its chunk says will come:
 * past the bound, the message is refused before it all comes. */
static bool over(const struct ncframe *f)
{
	uint64_t coming = f->mode == NCF_CHUNKED && f->st == C_DATA ? f->num : 0;

	return f->max && f->size + coming > f->max;
}

long ncframe_feed(struct ncframe *f, const char *buf, size_t n, bool first_only, size_t *end)
{
	size_t i = 0;

	*end = 0;
	if (f->error)
		return -1;
	while (i < n && f->mode != NCF_WAIT) {
		int ended;

		if (f->mode == NCF_CHUNKED && f->st == C_DATA) {
			size_t k = f->num < n - i ? (size_t)f->num : n - i;

			f->num -= k;
			f->size += k;
			i += k;
			if (!f->num)
				f->st = C_LF;
			continue;
		}
		f->size++;
		ended = f->mode == NCF_CHUNKED ? chunk_byte(f, buf[i]) : eom_byte(f, buf[i]);
		i++;
		if (ended < 0)
			return -1;
		if (over(f))
			return fail(f, -2, "a message over the bound");
		if (!ended)
			continue;
		*end = i;
		f->size = 0;
		if (f->mode == NCF_HELLO)
			f->mode = NCF_WAIT;
		if (first_only)
			break;
	}
	return (long)i;
}
