/* RFC 6242 framing read as it comes (drivers/netconf_frame.c), and the
 * relay (drivers/netconf_relay.c) handing libnetconf2 whole messages by
 * it: the hellos' end-of-message framing, then chunks where both offer
 * :base:1.1 (else end-of-message again); a message's end found exactly
 * however the bytes are cut, "\n##\n" inside a chunk's data no end;
 * malformed framing and a message past the bound refused, with a reason. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/internal.h"

#define HELLO11 "<hello><capabilities><capability>urn:ietf:params:netconf:base:1.1</capability>"
#define HELLO10 "<hello><capabilities><capability>urn:ietf:params:netconf:base:1.0</capability>"
#define TAIL	"</capabilities></hello>]]>]]>"

/* Feed text in pieces of step bytes: the offsets (from the text's start)
 * just past each message's end, in ends (at most n); how many, or -1/-2
 * as ncframe_feed. The other side's hello offers base11. */
static int ends_of(struct ncframe *f, const char *text, size_t step, bool peer11, size_t *ends,
		   int n)
{
	size_t len = strlen(text), at = 0;
	int k = 0;

	while (at < len) {
		size_t piece = len - at < step ? len - at : step, end;
		long r = ncframe_feed(f, text + at, piece, true, &end);

		if (r < 0)
			return (int)r;
		if (end && k < n)
			ends[k++] = at + end;
		if (f->mode == NCF_WAIT)
			ncframe_decide(f, peer11);
		at += (size_t)r;
	}
	return k;
}

static void test_chunked(void **state)
{
	/* the hello ends "]]]>]]>": a match that fails keeps a prefix; the
	 * data of the first message holds "\n##\n" and "]]>]]>" */
#define HELLO HELLO11 "</capabilities></hello>]]]>]]>"
	static const char text[] = HELLO "\n#10\nab\n##\ncdef\n#2\n]]\n##\n"
					 "\n#6\n]]>]]>\n##\n";
	size_t want[] = {strlen(HELLO), strlen(text) - strlen("\n#6\n]]>]]>\n##\n"), strlen(text)};
	(void)state;

	/* every way to cut it gives the same ends */
	for (size_t step = 1; step <= strlen(text); step++) {
		struct ncframe f;
		size_t ends[8] = {0};

		ncframe_init(&f, 0);
		assert_int_equal(ends_of(&f, text, step, true, ends, 8), 3);
		assert_memory_equal(ends, want, sizeof(want));
		assert_int_equal(f.mode, NCF_CHUNKED);
		assert_int_equal(f.size, 0); /* between two messages */
	}
}

static void test_eom(void **state)
{
	/* a base:1.0 side (or peer): "]]>]]>" ends every message */
	static const char text[] = HELLO10 TAIL "<rpc-reply/>]]>]]><x/>]]>]]>";
	static const char eleven[] = HELLO11 TAIL "<rpc-reply/>]]>]]>";
	struct ncframe f;
	size_t ends[4];
	(void)state;

	ncframe_init(&f, 0);
	assert_int_equal(ends_of(&f, text, 5, true, ends, 4), 3);
	assert_int_equal(f.mode, NCF_EOM);
	assert_int_equal(ends[2], strlen(text));
	ncframe_init(&f, 0);
	assert_int_equal(ends_of(&f, eleven, 7, false, ends, 4), 2);
	assert_int_equal(f.mode, NCF_EOM);
	/* the scanner waits after the hello until told */
	ncframe_init(&f, 0);
	size_t end;
	long k = ncframe_feed(&f, eleven, strlen(eleven), false, &end);
	assert_int_equal(k, (long)strlen(HELLO11 TAIL));
	assert_int_equal(end, strlen(HELLO11 TAIL));
	assert_int_equal(f.mode, NCF_WAIT);
	assert_int_equal(ncframe_feed(&f, eleven + k, 3, false, &end), 0);
}

/* After both hellos offered :base:1.1, text is refused as rc, its reason
 * starting with why. */
static void refused(const char *text, uint64_t max, int rc, const char *why)
{
	struct ncframe f;
	size_t end;

	ncframe_init(&f, max);
	ncframe_feed(&f, HELLO11 TAIL, strlen(HELLO11 TAIL), false, &end);
	ncframe_decide(&f, true);
	assert_int_equal(ncframe_feed(&f, text, strlen(text), false, &end), rc);
	if (rc >= 0) {
		assert_null(f.error);
		return;
	}
	assert_non_null(f.error);
	assert_true(strncmp(f.error, why, strlen(why)) == 0);
	/* and it stays refused */
	assert_int_equal(ncframe_feed(&f, "\n#1\nx", 5, false, &end), -1);
}

static void test_bad(void **state)
{
	(void)state;
	refused("<rpc-reply/>]]>]]>", 0, -1, "a chunk does not start");
	refused("\n#0\n", 0, -1, "a chunk's size is not");
	refused("\n#01\nx\n##\n", 0, -1, "a chunk's size is not");
	refused("\n#1x\n", 0, -1, "a chunk's size is not");
	refused("\n#4294967296\n", 0, -1, "a chunk's size over");
	refused("\n##\n", 0, -1, "a message of no chunk");
	refused("\n#1\nx\n#", 0, 7, ""); /* a part: fine so far */
	refused("\n#1\nx\n##x", 0, -1, "the end of chunks");
	refused("\n#2\nab\n#x", 0, -1, "a chunk's size is not");
	/* past the bound: refused at the header that says so, before the
	 * data comes, and when the data adds up past it */
	refused("\n#2097152\n", 1000, -2, "a message over the bound");
	refused("\n#500\n", 1000, 6, "");
	char big[700];
	memset(big, 'x', sizeof(big));
	memcpy(big, "\n#600\n", 6);
	memcpy(big + 606, "\n#500\n", 6);
	big[612] = 0;
	refused(big, 1000, -2, "a message over the bound");
}

static void test_restart(void **state)
{
	struct ncframe f, t;
	size_t end;
	static const char two[] = "\n#1\na\n##\n\n#2\nbc\n##\n";
	(void)state;

	ncframe_init(&f, 0);
	ncframe_feed(&f, HELLO11 TAIL, strlen(HELLO11 TAIL), false, &end);
	ncframe_decide(&f, true);
	ncframe_feed(&f, "\n#5\nab", 6, false, &end);
	assert_int_not_equal(f.size, 0); /* a message begun */
	/* a reader's place is a message's start: the first message's end */
	ncframe_restart(&f);
	assert_int_equal(f.size, 0);
	t = f;
	assert_int_equal(ncframe_feed(&t, two, strlen(two), true, &end), 9);
	assert_int_equal(end, 9);
}

/* What the relay's lib end holds unread now. */
static int unread(int fd)
{
	int n = 0;

	return ioctl(fd, FIONREAD, &n) == 0 ? n : -1;
}

static int wait_unread(int fd, int want)
{
	double end = now_seconds() + 10;

	while (unread(fd) != want && now_seconds() < end)
		usleep(5000);
	return unread(fd);
}

static void test_relay(void **state)
{
	struct ofc_error err = {0};
	int sp[2], lib;
	struct ncrelay *r;
	static const char part[] = "\n#10\nab\n##\ncd";
	(void)state;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sp), 0);
	r = ncrelay_start(sp[1], NULL, NULL, &lib, &err);
	assert_non_null(r);
	/* libnetconf2's hello goes out, the device's comes in */
	assert_int_equal(write(lib, HELLO11 TAIL, strlen(HELLO11 TAIL)),
			 (ssize_t)strlen(HELLO11 TAIL));
	assert_int_equal(write(sp[0], HELLO11 TAIL, strlen(HELLO11 TAIL)),
			 (ssize_t)strlen(HELLO11 TAIL));
	assert_int_equal(wait_unread(lib, (int)strlen(HELLO11 TAIL)), (int)strlen(HELLO11 TAIL));
	char hello[256];
	assert_int_equal(read(lib, hello, strlen(HELLO11 TAIL)), (ssize_t)strlen(HELLO11 TAIL));
	/* a chunk whose data holds "\n##\n": not an end, nothing handed
	 * over (a part would leave libnetconf2 waiting for the rest) */
	assert_int_equal(write(sp[0], part, strlen(part)), (ssize_t)strlen(part));
	usleep(200000);
	assert_int_equal(unread(lib), 0);
	/* the rest: the message whole */
	assert_int_equal(write(sp[0], "ef\n##\n", 6), 6);
	assert_int_equal(wait_unread(lib, (int)strlen(part) + 6), (int)strlen(part) + 6);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_OPEN);
	/* garbage: the connection ends, and says why */
	assert_int_equal(write(sp[0], "<oops/>", 7), 7);
	double end = now_seconds() + 10;
	while (ncrelay_state(r, NULL) == NCRELAY_OPEN && now_seconds() < end)
		usleep(5000);
	assert_int_equal(ncrelay_state(r, NULL), NCRELAY_FRAMING);
	assert_string_equal(ncrelay_framing(r), "a chunk does not start with \\n#");
	close(sp[0]);
	close(lib);
	ncrelay_stop(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_chunked), cmocka_unit_test(test_eom),
	    cmocka_unit_test(test_bad),	    cmocka_unit_test(test_restart),
	    cmocka_unit_test(test_relay),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
