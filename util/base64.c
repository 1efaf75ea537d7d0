/* Base64 (RFC 4648), the one codec for what carries bytes as text: etcd's
 * v3 JSON gateway (keys and values) and protobuf's JSON mapping (bytes
 * fields, which the network API reads and writes). */
#include "util/util.h"

#include <stdlib.h>

static const char b64_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *b64_encode(const void *data, size_t len)
{
	const uint8_t *p = data;
	char *out = xmalloc((len + 2) / 3 * 4 + 1), *o = out;

	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)p[i + 1] << 8;
		if (i + 2 < len)
			v |= p[i + 2];
		*o++ = b64_chars[v >> 18 & 63];
		*o++ = b64_chars[v >> 12 & 63];
		*o++ = i + 1 < len ? b64_chars[v >> 6 & 63] : '=';
		*o++ = i + 2 < len ? b64_chars[v & 63] : '=';
	}
	*o = 0;
	return out;
}

/* 0-63, -2 for padding, -1 for anything else; the URL-safe alphabet's two
 * only when asked. */
static int b64_value(char c, bool url)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || (url && c == '-'))
		return 62;
	if (c == '/' || (url && c == '_'))
		return 63;
	return c == '=' ? -2 : -1;
}

int b64_decode(const char *s, size_t n, unsigned flags, uint8_t **out, size_t *len)
{
	bool url = flags & B64_URL_SAFE, unpadded = flags & B64_UNPADDED;
	uint8_t *d = xmalloc(n / 4 * 3 + 3);
	uint32_t acc = 0;
	size_t k = 0, bits = 0, pad = 0;

	for (size_t i = 0; i < n; i++) {
		int v = b64_value(s[i], url);

		if (v == -1 || (v >= 0 && pad))
			goto bad;
		if (v == -2) {
			pad++;
			continue;
		}
		acc = acc << 6 | (uint32_t)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			d[k++] = (uint8_t)(acc >> bits);
		}
	}
	/* Not what an encoder writes: a last group of one character, bits
	 * left that are not zero, padding past a whole group or short of one
	 * (or missing where it is required). */
	if (bits >= 6 || (acc & ((1u << bits) - 1)) || pad > 2 ||
	    (pad && (n % 4 || pad != (4 - (n - pad) % 4) % 4)) || (!unpadded && n % 4))
		goto bad;
	d[k] = 0;
	*out = d;
	*len = k;
	return 0;
bad:
	free(d);
	return -1;
}
