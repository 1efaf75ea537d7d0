/* libFuzzer: what a switch sends never crashes the tl1 driver. The first
 * byte picks the parser: odd, a command as ocs-emu parses it; even, the
 * driver's reply framing, fed in chunks of (byte >> 1) + 1 bytes the way
 * the socket delivers them, with every completed payload line parsed as a
 * cross-connect of a 64-port switch in both dialects (RTRV-PATCH, and
 * RTRV-CRS under a Calient port map of 16 ports a slot from slot 3). */
#include <stdlib.h>
#include <string.h>

#include "drivers/internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void replies(const uint8_t *data, size_t size, size_t chunk)
{
	struct strbuf in = {0};
	struct tl1_reply r = {0};
	struct ofc_error err = {0};
	uint32_t ctag = 1;
	int rc = 0;

	for (size_t off = 0; off < size && rc >= 0; off += chunk) {
		sb_add(&in, (const char *)data + off, size - off < chunk ? size - off : chunk);
		while ((rc = tl1_take_reply(&in, ctag, &r, &err)) == 1) {
			for (uint32_t i = 0; i < r.nlines; i++) {
				static const struct tl1_port_map map = {1, 3, 16};
				uint32_t a, b;
				bool act;

				if (tl1_parse_xconn(r.lines[i], 64, &a, &b) == 0 &&
				    (a < 1 || a > 64 || b < 1 || b > 64))
					abort();
				if (tl1_calient_parse_crs(r.lines[i], &map, 64, &a, &b, &act) ==
					0 &&
				    (a < 1 || a > 64 || b < 1 || b > 64))
					abort();
			}
			ctag++;
		}
		if (rc < 0 && !err.msg[0])
			abort(); /* every error says what was wrong */
	}
	tl1_reply_free(&r);
	sb_free(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 1 << 16)
		return 0;
	if (data[0] & 1) {
		char *text = malloc(size);
		struct tl1_cmd cmd;
		struct ofc_error err = {0};

		memcpy(text, data + 1, size - 1);
		text[size - 1] = '\0';
		if (tl1_parse_cmd(text, &cmd, &err) < 0 && !err.msg[0])
			abort();
		free(text);
	} else {
		replies(data + 1, size - 1, (size_t)(data[0] >> 1) + 1);
	}
	return 0;
}
