/* A request's framing, checked from what libmicrohttpd parsed (internal.h,
 * "framing.c"; docs/control.md, "The network API").
 *
 * libmicrohttpd 0.9.75 reads the first Content-Length of several, lets a
 * Transfer-Encoding silently override a Content-Length, and decodes %00
 * into a C string that ends there (partition=jobA%00x was served as jobA).
 * Where two parsers of one request could disagree on where it ends or what
 * it names (RFC 9112 section 6.3, 11.2), the request is refused with 400
 * and the connection closed, as the RFC asks of a server. */
#include "controller/gateway/internal.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

size_t gw_unescape(void *cls, struct MHD_Connection *mc, char *s)
{
	size_t n = MHD_http_unescape(s);

	(void)cls;
	if (memchr(s, 0, n)) {
		const union MHD_ConnectionInfo *ci =
		    MHD_get_connection_info(mc, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		struct gw_conn *c = ci ? ci->socket_context : NULL;

		if (c)
			c->nul = true;
	}
	return n;
}

struct framing {
	unsigned content_length, transfer_encoding;
	char te[40];
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct framing *f = cls;

	(void)kind;
	if (strcasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH) == 0) {
		f->content_length++;
	} else if (strcasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING) == 0) {
		f->transfer_encoding++;
		snprintf(f->te, sizeof(f->te), "%s", value ? value : "");
	}
	return MHD_YES;
}

int gw_framing_check(struct MHD_Connection *mc, struct gw_conn *c, const char *version, char *why,
		     size_t len)
{
	struct framing f = {0};
	bool nul = c && c->nul;

	if (c)
		c->nul = false;
	if (nul) {
		snprintf(why, len, "a NUL byte (%%00) in the path or the query");
		return -1;
	}
	MHD_get_connection_values(mc, MHD_HEADER_KIND, count_header, &f);
	if (f.content_length > 1)
		snprintf(why, len, "%u Content-Length headers: one at most", f.content_length);
	else if (f.transfer_encoding && f.content_length)
		snprintf(why, len, "Content-Length and Transfer-Encoding together");
	else if (f.transfer_encoding > 1)
		snprintf(why, len, "%u Transfer-Encoding headers: one at most",
			 f.transfer_encoding);
	else if (f.transfer_encoding && strcasecmp(f.te, "chunked") != 0)
		snprintf(why, len, "Transfer-Encoding '%.30s': only chunked is taken", f.te);
	else if (f.transfer_encoding && version && strcmp(version, MHD_HTTP_VERSION_1_0) == 0)
		snprintf(why, len, "Transfer-Encoding in an HTTP/1.0 request");
	else
		return 0;
	return -1;
}
