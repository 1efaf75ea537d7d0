/* libFuzzer: what an MRR ring agent sends never crashes the mrr driver and
 * never becomes a state the ring cannot hold. The input is what the socket
 * would deliver: 4-byte big-endian lengths and frames, in a row; each
 * frame is taken as the reply to request 1, 2, ... (mrr_take_reply) and
 * its channels read as the state of an 8-node ring with 2 interfaces and 4
 * wavelengths (mrr_reply_state), then checked as device_read checks it. */
#include <stdlib.h>
#include <string.h>

#include "drivers/internal.h"
#include "proto/mrr.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const struct device_cfg cfg = {.name = "ring0",
				       .driver = "mrr",
				       .cls = DEV_RING,
				       .ring_nodes = 8,
				       .interfaces = 2,
				       .wavelengths = 4};
	uint64_t seq = 1;

	if (size > 1 << 16)
		return 0;
	while (size >= 4) {
		uint32_t len = frame_len_get(data);
		Ofc__V1__MrrReply *r = NULL;
		struct ofc_error err = {0};
		struct device_state s;

		if (len > MRR_MAX_FRAME || len > size - 4)
			break; /* the driver stops at an oversized or short frame */
		state_init(&s, DEV_RING);
		if (mrr_take_reply(data + 4, len, seq, &r, &err) == 0) {
			if (!r || r->seq != seq)
				abort();
			if (mrr_reply_state(r, &cfg, &s, &err) == 0) {
				for (uint32_t i = 0; i < s.nch; i++)
					if (s.ch[i].node >= 8 || s.ch[i].iface >= 2 ||
					    s.ch[i].wl >= 4 ||
					    (s.ch[i].role != MRR_ADD && s.ch[i].role != MRR_DROP))
						abort();
				state_sort(&s);
				if (state_check(&s, &cfg, &err) < 0 && err.reason != OFC_R_GARBAGE)
					abort();
			} else if (!err.msg[0] || err.reason == OFC_R_NONE) {
				abort(); /* every error says what, and why for read-only eyes */
			}
			ofc__v1__mrr_reply__free_unpacked(r, NULL);
		} else if (!err.msg[0] || err.reason != OFC_R_GARBAGE || r) {
			abort();
		}
		state_free(&s);
		data += 4 + (size_t)len;
		size -= 4 + (size_t)len;
		seq++;
	}
	return 0;
}
