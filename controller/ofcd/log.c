/* The log every thread of ofcd writes through (ofcd_opts.log, at
 * ofcd_opts.log_level and above), and the peers' lines rate-limited: a
 * file of its own, below everything that logs. */
#include "controller/ofcd/conn.h"

#include <stdarg.h>
#include <stdio.h>

static void log_text(struct ofcd *d, int level, const char *fmt, va_list ap) OFC_PRINTF(3, 0);
static void log_text(struct ofcd *d, int level, const char *fmt, va_list ap)
{
	char msg[1200];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	/* Client-supplied strings end up here: no control characters in logs. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	d->o.log(d->o.log_ctx, level, msg);
}

void ofcd_log(struct ofcd *d, int level, const char *fmt, ...)
{
	va_list ap;

	if (!d->o.log || level > d->o.log_level)
		return;
	va_start(ap, fmt);
	log_text(d, level, fmt, ap);
	va_end(ap);
}

/* The token bucket: refill at LOG_RATE a second up to LOG_BURST; true when
 * a token was taken. */
static bool log_token(struct log_limit *b)
{
	double now = now_seconds();

	if (b->last == 0)
		b->tokens = LOG_BURST;
	else
		b->tokens += (now - b->last) * LOG_RATE;
	if (b->tokens > LOG_BURST)
		b->tokens = LOG_BURST;
	b->last = now;
	if (b->tokens < 1)
		return false;
	b->tokens -= 1;
	return true;
}

void ofcd_log_flush(struct ofcd *d)
{
	struct log_limit *b = &d->loop->peer_log;

	if (!b->suppressed || !log_token(b))
		return;
	ofcd_log(d, OFCD_LOG_WARNING, "%llu log messages suppressed (more than %.0f a second)",
		 (unsigned long long)b->suppressed, LOG_RATE);
	b->suppressed = 0;
}

void ofcd_log_peer(struct ofcd *d, int level, const char *fmt, ...)
{
	va_list ap;

	if (!d->o.log || level > d->o.log_level)
		return;
	ofcd_log_flush(d);
	if (!log_token(&d->loop->peer_log)) {
		d->loop->peer_log.suppressed++;
		return;
	}
	va_start(ap, fmt);
	log_text(d, level, fmt, ap);
	va_end(ap);
}
