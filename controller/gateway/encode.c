/* How the gateway's answers are encoded on the wire: gzip when the client
 * accepts it (zlib; the state's JSON is 4 MB at 8,192 hosts and shrinks
 * about tenfold), and an ETag on the state, so that a read of a state the
 * client holds already answers 304 with no body. The ETag is a hash of the
 * JSON rather than the generation and the event log's place alone: the
 * queue, a running transaction and the devices' counters change the state
 * with no event, and a 304 must never hide a change. */
#include "controller/gateway/internal.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* Below this a body goes as it is: gzip's header and the CPU are not
 * worth it. */
#define GZIP_MIN 1024

/* Whether a header's list (Accept-Encoding) names token with a q above 0. */
static bool lists(const char *list, const char *token)
{
	size_t tl = strlen(token);

	for (const char *p = list; p && *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *end = p + strcspn(p, ",");
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *name_end = semi ? semi : end;

		while (name_end > p && (name_end[-1] == ' ' || name_end[-1] == '\t'))
			name_end--;
		if ((size_t)(name_end - p) == tl && strncasecmp(p, token, tl) == 0) {
			const char *q = semi ? strstr(semi, "q=") : NULL;

			/* q=0 (0, 0.0, 0.00...) refuses it */
			if (!q || q > end || strtod(q + 2, NULL) > 0)
				return true;
		}
		p = end;
	}
	return false;
}

bool gw_accepts_gzip(struct MHD_Connection *mc)
{
	return lists(MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "Accept-Encoding"), "gzip");
}

/* body (len bytes) gzipped into a new buffer (*out_len), or NULL when zlib
 * fails or the result is no smaller. At most deflateBound's bytes: the
 * memory is bounded by the body's size. */
char *gw_gzip(const char *body, size_t len, size_t *out_len)
{
	z_stream z;
	char *out;

	if (len < GZIP_MIN || len > (size_t)UINT32_MAX)
		return NULL;
	memset(&z, 0, sizeof(z));
	/* 15 + 16: a gzip wrapper; level 1: JSON's repetition is found at the
	 * fastest level too (at 8,192 hosts, level 6 saved little more and
	 * took several times the time) */
	if (deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return NULL;
	uLong cap = deflateBound(&z, (uLong)len);
	out = xmalloc(cap);
	z.next_in = (Bytef *)body;
	z.avail_in = (uInt)len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	int rc = deflate(&z, Z_FINISH);
	*out_len = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END || *out_len >= len) {
		free(out);
		return NULL;
	}
	return out;
}

void gw_etag(const char *body, size_t len, char *tag, size_t n)
{
	/* FNV-1a, 64 bits: not for secrecy, only to tell two bodies apart */
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)body[i];
		h *= UINT64_C(1099511628211);
	}
	snprintf(tag, n, "\"%016llx-%zx\"", (unsigned long long)h, len);
}

bool gw_etag_matches(struct MHD_Connection *mc, const char *tag)
{
	const char *inm = MHD_lookup_connection_value(mc, MHD_HEADER_KIND, "If-None-Match");
	size_t tl = strlen(tag);

	for (const char *p = inm; p && *p;) {
		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		const char *end = p + strcspn(p, ",");
		const char *e = end;

		while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
			e--;
		if (e - p == 1 && *p == '*')
			return true;
		if (e - p > 2 && strncmp(p, "W/", 2) == 0) /* (weak comparison, RFC 9110 13.1.2) */
			p += 2;
		if ((size_t)(e - p) == tl && memcmp(p, tag, tl) == 0)
			return true;
		p = end;
	}
	return false;
}

enum MHD_Result gw_send_encoded(struct MHD_Connection *mc, unsigned code, const char *type,
				char *body, size_t len, bool close, const char *etag)
{
	struct MHD_Response *r;
	enum MHD_Result rc;
	size_t zlen = 0;
	char *z = gw_accepts_gzip(mc) ? gw_gzip(body, len, &zlen) : NULL;

	if (z) {
		free(body);
		body = z;
		len = zlen;
	}
	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	MHD_add_response_header(r, "Content-Type", type);
	if (len >= GZIP_MIN || z)
		MHD_add_response_header(r, "Vary", "Accept-Encoding");
	if (z)
		MHD_add_response_header(r, "Content-Encoding", "gzip");
	if (etag)
		MHD_add_response_header(r, "ETag", etag);
	if (close)
		MHD_add_response_header(r, "Connection", "close");
	/* (ofcd's BUSY, a share taken, or no leader now: when to ask again) */
	if (code == MHD_HTTP_SERVICE_UNAVAILABLE || code == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, "Retry-After", GW_RETRY_AFTER);
	rc = MHD_queue_response(mc, code, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- a stream's gzip -------------------------------------------------------------- */

struct gw_zstream {
	z_stream z;
	bool done;
};

struct gw_zstream *gw_zstream_new(void)
{
	struct gw_zstream *zs = xcalloc(1, sizeof(*zs));

	/* 12 + 16: a gzip wrapper, a 4 KiB window; memLevel 5: deflate's
	 * state is 2^14 + 2^14 bytes (zlib's zconf.h), 32 KiB a stream kept
	 * open for hours, where the defaults would take 256 KiB */
	if (deflateInit2(&zs->z, 1, Z_DEFLATED, 12 + 16, 5, Z_DEFAULT_STRATEGY) != Z_OK) {
		free(zs);
		return NULL;
	}
	return zs;
}

char *gw_zstream_put(struct gw_zstream *zs, const char *in, size_t len, bool last, size_t *out_len)
{
	size_t cap = len + len / 8 + 64, n = 0;
	char *out = xmalloc(cap);
	int rc;

	if (zs->done || len > (size_t)UINT32_MAX) {
		free(out);
		return NULL;
	}
	zs->z.next_in = (Bytef *)in;
	zs->z.avail_in = (uInt)len;
	/* Z_SYNC_FLUSH: all of this event is readable at the client now;
	 * each round grows out by half, and ends once deflate has room left */
	do {
		if (cap - n < 64) {
			cap += cap / 2;
			out = xrealloc(out, cap);
		}
		zs->z.next_out = (Bytef *)out + n;
		zs->z.avail_out = (uInt)(cap - n);
		rc = deflate(&zs->z, last ? Z_FINISH : Z_SYNC_FLUSH);
		n = cap - zs->z.avail_out;
	} while ((rc == Z_OK || rc == Z_BUF_ERROR) && zs->z.avail_out == 0);
	if (last || (rc != Z_OK && rc != Z_BUF_ERROR))
		zs->done = true;
	*out_len = n;
	return out;
}

void gw_zstream_free(struct gw_zstream *zs)
{
	if (!zs)
		return;
	deflateEnd(&zs->z);
	free(zs);
}

enum MHD_Result gw_send_not_modified(struct MHD_Connection *mc, const char *etag)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc;

	MHD_add_response_header(r, "ETag", etag);
	MHD_add_response_header(r, "Vary", "Accept-Encoding");
	rc = MHD_queue_response(mc, MHD_HTTP_NOT_MODIFIED, r);
	MHD_destroy_response(r);
	return rc;
}
