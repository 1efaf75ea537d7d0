/* A schedule made a step at a time (struct sched_stream, see sched.h):
 * written as its steps are made, in the shapes sched_write_json_members
 * and sched_write_text give the explicit schedule, byte for byte, or made
 * whole for a consumer that holds every transfer. A pipelined schedule's
 * file (model W's 256-GPU allgather: 35 M transfers, 700 MB held) then
 * costs one step's transfers. */
#include "sched/internal.h"

#include <stdlib.h>
#include <string.h>

size_t sched_stream_transfers(const struct sched_stream *st)
{
	size_t n = 0;

	for (uint32_t t = 0; t < st->nsteps; t++)
		n += st->count[t];
	return n;
}

struct xfer *sched_stream_step_buffer(const struct sched_stream *st)
{
	size_t most = 0;

	for (uint32_t t = 0; t < st->nsteps; t++)
		if (st->count[t] > most)
			most = st->count[t];
	return xmalloc((most + 1) * sizeof(struct xfer));
}

/* Whether the schedule's transfers are WDM lightpaths, as sched_is_wdm
 * says of the explicit one: its first transfer's, once one is made. */
static void note_wdm(const struct xfer *buf, size_t n, bool *seen, bool *wdm)
{
	if (!*seen && n) {
		*wdm = xfer_dir(&buf[0]) != DIR_NONE;
		*seen = true;
	}
}

void sched_stream_write_json_members(struct json_writer *w, const struct sched_stream *st)
{
	struct xfer *buf = sched_stream_step_buffer(st);
	bool seen = false, wdm = false;

	sched_write_json_head(w, st->head, st->nsteps, sched_stream_transfers(st));
	jw_key(w, "steps");
	jw_arr_begin(w);
	for (uint32_t t = 0; t < st->nsteps; t++) {
		st->fill(st->ctx, t, buf);
		note_wdm(buf, st->count[t], &seen, &wdm);
		jw_obj_begin(w);
		jw_key(w, "transfers");
		jw_arr_begin(w);
		for (size_t i = 0; i < st->count[t]; i++)
			sched_write_json_xfer(w, st->head, &buf[i], wdm);
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
	free(buf);
}

void sched_stream_write_text(FILE *out, const struct sched_stream *st, uint32_t max_lines)
{
	const struct schedule *h = st->head;
	struct xfer *buf = sched_stream_step_buffer(st);
	bool seen = false, wdm = false;
	uint32_t lines = 0;

	fprintf(out, "%s schedule '%s' on %u nodes: %u steps, %zu transfers\n",
		sched_collective_name(h->collective), h->algorithm, h->nodes, st->nsteps,
		sched_stream_transfers(st));
	for (uint32_t t = 0; t < st->nsteps && lines < max_lines; t++) {
		fprintf(out, "step %u: %u transfers\n", t + 1, (uint32_t)st->count[t]);
		lines++;
		if (lines >= max_lines)
			break;
		st->fill(st->ctx, t, buf);
		note_wdm(buf, st->count[t], &seen, &wdm);
		for (size_t i = 0; i < st->count[t] && lines < max_lines; i++, lines++)
			sched_write_text_xfer(out, h, &buf[i], wdm);
	}
	if (lines >= max_lines)
		fprintf(out, "... (--format json -o FILE writes every transfer)\n");
	free(buf);
}

int sched_stream_expand(const struct sched_stream *st, struct schedule *s, struct ofc_error *err)
{
	const struct schedule *h = st->head;
	size_t total = sched_stream_transfers(st);
	struct xfer *out;

	if (total > UINT32_MAX)
		return ofc_error_set(err, OFC_E_INPUT,
				     "%zu transfers: more than a schedule holds (%u); write them "
				     "to a file (-o) instead",
				     total, UINT32_MAX);
	sched_init(s, h->collective, h->algorithm, h->nodes);
	memcpy(s->topology, h->topology, sizeof(s->topology));
	s->size_bytes = h->size_bytes;
	s->root = h->root;
	s->time_us = h->time_us;
	s->lower_bound_us = h->lower_bound_us;
	s->verified = h->verified;
	memcpy(s->metrics, h->metrics, sizeof(s->metrics));
	s->nmetrics = h->nmetrics;
	out = sched_append_steps(s, st->nsteps, st->count);
	for (uint32_t t = 0; t < st->nsteps; t++) {
		st->fill(st->ctx, t, out);
		out += st->count[t];
	}
	return 0;
}
