/* libFuzzer: the network API's JSON request decoder (pb_read_json, issue
 * 36). The first byte picks the message (a Request body the gateway's
 * routes take, or Request itself), the rest is the text. Every accepted
 * message packs, and unpacks to a message that packs to the same bytes;
 * every refusal is OFC_E_INPUT with a message; the policy parser takes the
 * same bytes and either accepts or names a line. */
#include <stdlib.h>
#include <string.h>

#include "controller/export/export.h"
#include "controller/gateway/gateway.h"
#include "proto/control.pb-c.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const ProtobufCMessageDescriptor *const descs[] = {
    &ofc__v1__request__descriptor,	     &ofc__v1__get_state__descriptor,
    &ofc__v1__get_schedule__descriptor,	     &ofc__v1__apply_config__descriptor,
    &ofc__v1__reconfigure__descriptor,	     &ofc__v1__cancel__descriptor,
    &ofc__v1__report_failure__descriptor,    &ofc__v1__drain__descriptor,
    &ofc__v1__release_partition__descriptor,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	ProtobufCMessage *m = NULL;
	struct ofc_error err = {0};

	if (size < 1 || size > 1 << 16)
		return 0;
	const ProtobufCMessageDescriptor *d = descs[data[0] % (sizeof(descs) / sizeof(descs[0]))];
	if (pb_read_json(d, (const char *)data + 1, size - 1, &m, &err) == 0) {
		size_t n = protobuf_c_message_get_packed_size(m);
		uint8_t *a = malloc(n + 1), *b = malloc(n + 1);
		ProtobufCMessage *back;

		if (protobuf_c_message_pack(m, a) != n)
			abort();
		back = protobuf_c_message_unpack(d, NULL, n, a);
		if (!back || protobuf_c_message_get_packed_size(back) != n ||
		    protobuf_c_message_pack(back, b) != n || memcmp(a, b, n) != 0)
			abort();
		protobuf_c_message_free_unpacked(back, NULL);
		protobuf_c_message_free_unpacked(m, NULL);
		free(a);
		free(b);
	} else if (err.code != OFC_E_INPUT || !err.msg[0] || m) {
		abort();
	}
	struct gw_policy *p = NULL;
	memset(&err, 0, sizeof(err));
	if (gw_policy_parse("fuzz.policy", (const char *)data + 1, size - 1, &p, &err) == 0) {
		for (uint32_t i = 0; i < p->n; i++)
			if (!p->e[i].identity || !strchr(p->e[i].identity, ':') ||
			    (p->e[i].role == GW_ROLE_TENANT) != (p->e[i].npartitions > 0))
				abort();
		gw_policy_free(p);
	} else if (err.code != OFC_E_INPUT || strncmp(err.msg, "fuzz.policy", 11) != 0) {
		abort();
	}
	return 0;
}
