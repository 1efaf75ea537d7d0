/* Errors that carry where the bad input was. */
#include "util/util.h"

#include <string.h>

void ofc_error_clear(struct ofc_error *err)
{
	memset(err, 0, sizeof(*err));
}

static void set_msg(struct ofc_error *err, const char *fmt, va_list ap)
{
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
}

int ofc_error_set(struct ofc_error *err, enum ofc_errcode code, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->reason = OFC_R_NONE;
	err->file[0] = '\0';
	err->line = err->col = 0;
	va_start(ap, fmt);
	set_msg(err, fmt, ap);
	va_end(ap);
	return -1;
}

int ofc_error_setr(struct ofc_error *err, enum ofc_errcode code, enum ofc_reason reason,
		   const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->reason = reason;
	err->file[0] = '\0';
	err->line = err->col = 0;
	va_start(ap, fmt);
	set_msg(err, fmt, ap);
	va_end(ap);
	return -1;
}

const char *ofc_reason_name(enum ofc_reason r)
{
	static const char *const names[] = {
	    [OFC_R_NONE] = "",
	    [OFC_R_TIMEOUT] = "timeout",
	    [OFC_R_CLOSED] = "closed",
	    [OFC_R_LOST] = "lost",
	    [OFC_R_AUTH] = "auth",
	    [OFC_R_IDENTITY] = "identity",
	    [OFC_R_REFUSED] = "refused",
	    [OFC_R_GARBAGE] = "garbage",
	    [OFC_R_TOO_BIG] = "too-big",
	    [OFC_R_MISMATCH] = "mismatch",
	    [OFC_R_CREDENTIALS] = "credentials",
	    [OFC_R_FENCED] = "fenced",
	};

	return (size_t)r < ARRAY_SIZE(names) && names[r] ? names[r] : "";
}

int ofc_error_at(struct ofc_error *err, enum ofc_errcode code, const char *file, unsigned line,
		 unsigned col, const char *fmt, ...)
{
	va_list ap;

	err->code = code;
	err->reason = OFC_R_NONE;
	snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
	err->line = line;
	err->col = col;
	va_start(ap, fmt);
	set_msg(err, fmt, ap);
	va_end(ap);
	return -1;
}

void ofc_error_prefix(struct ofc_error *err, const char *fmt, ...)
{
	char pre[256], old[sizeof(err->msg)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(pre, sizeof(pre), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation is fine for a message; say so to the compiler. */
	int k = snprintf(err->msg, sizeof(err->msg), "%s: ", pre);
	if (k > 0 && (size_t)k < sizeof(err->msg))
		snprintf(err->msg + k, sizeof(err->msg) - (size_t)k, "%.*s",
			 (int)(sizeof(err->msg) - (size_t)k - 1), old);
}

const char *ofc_error_str(const struct ofc_error *err, char *buf, size_t n)
{
	if (err->file[0] && err->line)
		snprintf(buf, n, "%s:%u:%u: %s", err->file, err->line, err->col ? err->col : 1,
			 err->msg);
	else if (err->file[0])
		snprintf(buf, n, "%s: %s", err->file, err->msg);
	else
		snprintf(buf, n, "%s", err->msg);
	return buf;
}

int ofc_error_exit_code(const struct ofc_error *err)
{
	switch (err->code) {
	case OFC_OK:
		return 0;
	case OFC_E_INPUT:
	case OFC_E_USAGE:
		return 2;
	case OFC_E_RUNTIME:
		break;
	}
	return 1;
}
