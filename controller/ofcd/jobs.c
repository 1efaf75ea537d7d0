/* What ofcd's threads hand each other: jobs (loop -> worker -> loop) and
 * notes (worker -> loop, woken through the eventfd), their freeing, packed
 * replies, and the log every thread writes through. The loop (server.c)
 * and the workers (work.c) both sit on this file. */
#include "controller/ofcd/internal.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ofcd_log(struct ofcd *d, int level, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;

	if (!d->o.log || level > d->o.log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* Client-supplied strings end up here: no control characters in logs. */
	for (char *p = msg; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	d->o.log(d->o.log_ctx, level, msg);
}

void ofcd_note(struct ofcd *d, struct note *n)
{
	uint64_t one = 1;

	pthread_mutex_lock(&d->note_mu);
	if (d->notes_tail)
		d->notes_tail->next = n;
	else
		d->notes = n;
	d->notes_tail = n;
	pthread_mutex_unlock(&d->note_mu);
	(void)!write(d->wake_fd, &one, sizeof(one));
}

void response_pack(const Ofc__V1__Response *r, uint8_t **buf, size_t *len)
{
	*len = protobuf_c_message_get_packed_size(&r->base);
	*buf = xmalloc(*len + 1);
	protobuf_c_message_pack(&r->base, *buf);
}

void job_free(struct job *j)
{
	if (!j)
		return;
	free(j->target);
	free(j->yaml);
	free(j->filename);
	free(j->spec);
	free(j->algo);
	fabcfg_unref(j->cfg);
	free(j->reply);
	snapshot_free(j->snap);
	fabcfg_unref(j->new_cfg);
	free(j->probe);
	while (j->deferred) {
		struct note *n = j->deferred;

		j->deferred = n->next;
		note_free(n);
	}
	free(j);
}

void note_free(struct note *n)
{
	if (!n)
		return;
	job_free(n->job);
	free(n->device);
	free(n->message);
	free(n->detail);
	free(n);
}
