/* A Response holding a schedule made a step at a time (struct
 * sched_stream: a fluid schedule's period), packed into one buffer as the
 * bytes protobuf-c packs for the Response holding every step, without the
 * message tree of every transfer (model W's 128 GPUs: 8.7 M transfers,
 * about 1.3 GB of messages beside the 140 MB expansion). protobuf-c packs a
 * message's fields in field-number order, a repeated field's elements one
 * after the other, and a submessage as its key, its length and its bytes:
 * so the Response is packed with its Schedule stepless, the steps' bytes
 * are counted from the stream (pb_steps_size), and the whole is the
 * stepless bytes with the Schedule's length grown by theirs and the steps
 * packed where field 6 goes, a step made at a time (pb_steps_pack). */
#include "controller/export/export.h"
#include "controller/export/internal.h"

#include <stdlib.h>

#define PB_RESPONSE_SCHEDULE 5 /* Response.schedule */
#define PB_SCHEDULE_STEPS    6 /* Schedule.steps */

static size_t varint_len(uint64_t v)
{
	size_t n = 1;

	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint8_t *varint_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The length-delimited field num among the fields [p, end) into f. */
static bool find_field(const uint8_t *p, const uint8_t *end, uint32_t num, struct pb_field *f)
{
	while (p < end)
		if (pb_next(&p, end, f) < 0)
			return false;
		else if (f->num == num && f->type == 2)
			return true;
	return false;
}

/* Where field num goes among the fields [p, end): before the first with a
 * larger number, else at the end. */
static const uint8_t *field_place(const uint8_t *p, const uint8_t *end, uint32_t num)
{
	struct pb_field f;

	while (p < end) {
		const uint8_t *at = p;

		if (pb_next(&p, end, &f) < 0 || f.num > num)
			return at;
	}
	return end;
}

int schedule_response_pack(const Ofc__V1__Response *resp, const struct sched_stream *st, size_t max,
			   size_t room, uint8_t **buf, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(&resp->base);
	uint8_t *head = xmalloc(n + 1), *out, *o;
	const uint8_t *end = head + n, *sched, *sched_end, *place;
	struct pb_field f;
	uint64_t steps, slen, total;

	*buf = NULL;
	*len = 0;
	protobuf_c_message_pack(&resp->base, head);
	/* the caller's Response holds a stepless Schedule: it is there */
	if (resp->body_case != OFC__V1__RESPONSE__BODY_SCHEDULE || resp->schedule->n_steps ||
	    !find_field(head, end, PB_RESPONSE_SCHEDULE, &f)) {
		free(head);
		return -1;
	}
	sched = f.val;
	sched_end = f.val + f.len;
	place = field_place(sched, sched_end, PB_SCHEDULE_STEPS);
	steps = pb_steps_size(st);
	slen = f.len + steps;
	total = (uint64_t)(f.start - head) + varint_len((PB_RESPONSE_SCHEDULE << 3) | 2) +
		varint_len(slen) + slen + (uint64_t)(end - sched_end);
	*len = total;
	if (total > max) {
		free(head);
		return 1;
	}
	out = xmalloc(room + total + 1);
	o = out + room;
	memcpy(o, head, (size_t)(f.start - head));
	o += f.start - head;
	o = varint_put(o, (PB_RESPONSE_SCHEDULE << 3) | 2);
	o = varint_put(o, slen);
	memcpy(o, sched, (size_t)(place - sched));
	o += place - sched;
	if (pb_steps_pack(st, o, steps) < 0) {
		free(out);
		free(head);
		return -1;
	}
	o += steps;
	memcpy(o, place, (size_t)(end - place));
	free(head);
	*buf = out;
	return 0;
}
