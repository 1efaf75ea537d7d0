/* A request's framing, checked from what libmicrohttpd parsed (internal.h,
 * "framing.c"; docs/control.md, "The network API").
 *
 * libmicrohttpd 0.9.75 reads the first Content-Length of several, lets a
 * Transfer-Encoding silently override a Content-Length, and decodes %00
 * into a C string that ends there (partition=jobA%00x was served as jobA).
 * Where two parsers of one request could disagree on where it ends or what
 * it names (RFC 9112 section 6.3, 11.2; an obs-fold, section 5.2), the
 * request is refused with 400 and the connection closed, as the RFC asks
 * of a server. */
#include "controller/gateway/internal.h"

#include <ctype.h>
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
	unsigned content_length, transfer_encoding, folded;
	char te[40];
};

/* RFC 9110's tchar: what a field name is made of. */
static bool is_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("!#$%&'*+-.^_`|~", *s))
			return false;
	return true;
}

/* An obs-fold (a header line that starts with a space or a tab, RFC 9112
 * section 5.2) is joined by libmicrohttpd 0.9.75 onto the previous
 * field's name, not its value: "X-A: b" then " Transfer-Encoding:
 * chunked" is one field named "X-ATransfer-Encoding: chunked". A name
 * that is no token (a space, a colon) is such a fold, or a line no parser
 * takes the same way; a name that begins with a framing field's and goes
 * on ("Transfer-Encodingchunked") is a framing field with a folded value.
 * A fold of a lone token onto another field ("X-Achunked") is a name like
 * any other to every parser but the one that reads the fold: it frames
 * nothing. */
static bool folded(const char *key)
{
	size_t cl = strlen(MHD_HTTP_HEADER_CONTENT_LENGTH),
	       te = strlen(MHD_HTTP_HEADER_TRANSFER_ENCODING), n = strlen(key);

	return !is_token(key) ||
	       (n > cl && strncasecmp(key, MHD_HTTP_HEADER_CONTENT_LENGTH, cl) == 0) ||
	       (n > te && strncasecmp(key, MHD_HTTP_HEADER_TRANSFER_ENCODING, te) == 0);
}

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct framing *f = cls;

	(void)kind;
	f->folded += folded(key);
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
	if (f.folded)
		snprintf(why, len,
			 "a header line that starts with a space or a tab (obs-fold), or a field "
			 "name that is not a token");
	else if (f.content_length > 1)
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
