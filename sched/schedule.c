/* The schedule type: building, metrics, and the shared JSON/text shapes. */
#include "sched/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const collective_names[] = {
    [SCHED_ALLGATHER] = "allgather", [SCHED_REDUCE_SCATTER] = "reduce-scatter",
    [SCHED_ALLREDUCE] = "allreduce", [SCHED_ALLTOALL] = "alltoall",
    [SCHED_BROADCAST] = "broadcast", [SCHED_REDUCE] = "reduce",
};

const char *sched_collective_name(enum sched_collective c)
{
	if ((size_t)c < ARRAY_SIZE(collective_names) && collective_names[c])
		return collective_names[c];
	return "unknown";
}

int sched_collective_parse(const char *name, enum sched_collective *c)
{
	/* The rooted collectives are fluid/'s alone (fluid_collective_parse):
	 * the engines behind this parser (BFB, MCF, baselines) know the first
	 * four only. */
	for (size_t i = 0; i <= SCHED_ALLTOALL; i++)
		if (collective_names[i] && strcmp(collective_names[i], name) == 0) {
			*c = (enum sched_collective)i;
			return 0;
		}
	return -1;
}

void sched_init(struct schedule *s, enum sched_collective c, const char *algorithm, uint32_t nodes)
{
	memset(s, 0, sizeof(*s));
	s->collective = c;
	snprintf(s->algorithm, sizeof(s->algorithm), "%s", algorithm ? algorithm : "");
	s->nodes = nodes;
	s->cap_steps = 16;
	s->step_start = xcalloc(s->cap_steps + 1, sizeof(uint32_t));
	s->time_us = NAN;
	s->lower_bound_us = NAN;
}

void sched_free(struct schedule *s)
{
	free(s->step_start);
	free(s->xfers);
	memset(s, 0, sizeof(*s));
}

void sched_reserve(struct schedule *s, size_t n)
{
	if (s->nxfers + n > s->cap_xfers) {
		s->cap_xfers = s->nxfers + n;
		/* The first room on huge pages: a lowering's whole schedule at
		 * once (genkautz:1024,4's paths: 10 M transfers, 200 MB) is
		 * otherwise 50,000 page faults, each a trap and a zeroed page. */
		s->xfers = s->xfers ? xreallocarray(s->xfers, s->cap_xfers, sizeof(struct xfer))
				    : sched_huge_alloc(s->cap_xfers * sizeof(struct xfer));
	}
}

void sched_reserve_steps(struct schedule *s, size_t n)
{
	if (s->nsteps + n > s->cap_steps) {
		s->cap_steps = s->nsteps + n;
		s->step_start = xreallocarray(s->step_start, s->cap_steps + 1, sizeof(uint32_t));
	}
}

void sched_step(struct schedule *s)
{
	if (s->nsteps + 1 > s->cap_steps) {
		s->cap_steps *= 2;
		s->step_start = xreallocarray(s->step_start, s->cap_steps + 1, sizeof(uint32_t));
	}
	s->nsteps++;
	s->step_start[s->nsteps] = (uint32_t)s->nxfers;
}

void sched_pad_steps(struct schedule *s, uint32_t before, uint32_t after)
{
	sched_reserve_steps(s, (size_t)before + after);
	memmove(s->step_start + before, s->step_start, ((size_t)s->nsteps + 1) * sizeof(uint32_t));
	for (uint32_t t = 0; t < before; t++)
		s->step_start[t] = 0;
	s->nsteps += before;
	for (uint32_t t = 0; t < after; t++)
		s->step_start[++s->nsteps] = (uint32_t)s->nxfers;
}

void sched_add(struct schedule *s, const struct xfer *x)
{
	if (s->nsteps == 0)
		sched_step(s);
	if (s->nxfers == UINT32_MAX)
		abort(); /* 4 G transfers: no schedule ofc can hold gets here */
	GROW(s->xfers, s->cap_xfers, s->nxfers + 1);
	s->xfers[s->nxfers++] = *x;
	s->step_start[s->nsteps] = (uint32_t)s->nxfers;
}

void sched_append(struct schedule *s, const struct schedule *s2)
{
	sched_reserve(s, s2->nxfers);
	for (uint32_t t = 0; t < s2->nsteps; t++) {
		sched_step(s);
		for (uint32_t i = s2->step_start[t]; i < s2->step_start[t + 1]; i++)
			sched_add(s, &s2->xfers[i]);
	}
}

size_t sched_block_xfers(const struct schedule *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nxfers; i++)
		n += xfer_blocks(&s->xfers[i]);
	return n;
}

bool sched_has_spans(const struct schedule *s)
{
	for (size_t i = 0; i < s->nxfers; i++)
		if (xfer_blocks(&s->xfers[i]) > 1)
			return true;
	return false;
}

void sched_unspan(const struct schedule *s, struct schedule *out)
{
	sched_init(out, s->collective, s->algorithm, s->nodes);
	memcpy(out->topology, s->topology, sizeof(out->topology));
	out->size_bytes = s->size_bytes;
	out->root = s->root;
	out->time_us = s->time_us;
	out->lower_bound_us = s->lower_bound_us;
	out->verified = s->verified;
	memcpy(out->metrics, s->metrics, sizeof(out->metrics));
	out->nmetrics = s->nmetrics;
	sched_reserve(out, sched_block_xfers(s));
	for (uint32_t t = 0; t < s->nsteps; t++) {
		sched_step(out);
		for (size_t i = s->step_start[t]; i < s->step_start[t + 1]; i++) {
			struct xfer x = s->xfers[i];
			uint32_t k = xfer_blocks(&x);

			x.flags = xfer_span_flags(x.flags, 0);
			for (uint32_t j = 0; j < k; j++, x.block++)
				sched_add(out, &x);
		}
	}
}

void sched_renumber(struct schedule *s, uint32_t n, const uint32_t *map)
{
	uint32_t old = s->nodes;
	bool a2a = s->collective == SCHED_ALLTOALL;

	if (sched_has_spans(s)) { /* consecutive blocks need not map to such */
		struct schedule u;

		sched_unspan(s, &u);
		sched_free(s);
		*s = u;
	}
	for (size_t i = 0; i < s->nxfers; i++) {
		struct xfer *x = &s->xfers[i];

		x->src = (uint16_t)map[x->src];
		x->dst = (uint16_t)map[x->dst];
		x->block = a2a ? map[x->block / old] * n + map[x->block % old] : map[x->block];
	}
	if (s->collective == SCHED_BROADCAST || s->collective == SCHED_REDUCE)
		s->root = map[s->root];
	s->nodes = n;
}

void sched_set_metric(struct schedule *s, const char *name, double value)
{
	for (unsigned i = 0; i < s->nmetrics; i++)
		if (strcmp(s->metrics[i].name, name) == 0) {
			s->metrics[i].value = value;
			return;
		}
	if (s->nmetrics == SCHED_MAX_METRICS)
		abort(); /* a programming error: raise SCHED_MAX_METRICS */
	snprintf(s->metrics[s->nmetrics].name, sizeof(s->metrics[0].name), "%s", name);
	s->metrics[s->nmetrics++].value = value;
}

double sched_metric(const struct schedule *s, const char *name)
{
	for (unsigned i = 0; i < s->nmetrics; i++)
		if (strcmp(s->metrics[i].name, name) == 0)
			return s->metrics[i].value;
	return NAN;
}

bool sched_is_wdm(const struct schedule *s)
{
	return s->nxfers && xfer_dir(&s->xfers[0]) != DIR_NONE;
}

void sched_write_json(struct json_writer *w, const struct schedule *s, bool with_steps)
{
	jw_obj_begin(w);
	sched_write_json_members(w, s, with_steps);
	jw_obj_end(w);
}

/* The members before the steps, for a schedule of nsteps steps and
 * ntransfers transfers (a reduced one's expansion has its program's steps
 * and order x its transfers). */
void sched_write_json_head(struct json_writer *w, const struct schedule *s, uint32_t nsteps,
			   size_t ntransfers)
{
	jw_key(w, "collective");
	jw_str(w, sched_collective_name(s->collective));
	jw_key(w, "algorithm");
	jw_str(w, s->algorithm);
	jw_key(w, "nodes");
	jw_uint(w, s->nodes);
	if (s->topology[0]) {
		jw_key(w, "topology");
		jw_str(w, s->topology);
	}
	if (s->size_bytes) {
		jw_key(w, "size_bytes");
		jw_uint(w, s->size_bytes);
	}
	jw_key(w, "num_steps");
	jw_uint(w, nsteps);
	jw_key(w, "num_transfers");
	jw_uint(w, ntransfers);
	jw_key(w, "time_us");
	jw_double(w, s->time_us);
	jw_key(w, "lower_bound_us");
	jw_double(w, s->lower_bound_us);
	jw_key(w, "verified");
	jw_bool(w, s->verified);
	for (unsigned i = 0; i < s->nmetrics; i++) {
		jw_key(w, s->metrics[i].name);
		jw_double(w, s->metrics[i].value);
	}
}

void sched_write_json_xfer(struct json_writer *w, const struct schedule *s, const struct xfer *x,
			   bool wdm)
{
	jw_obj_begin(w);
	jw_key(w, "src");
	jw_uint(w, x->src);
	jw_key(w, "dst");
	jw_uint(w, x->dst);
	jw_key(w, "origin");
	jw_uint(w, sched_block_origin(s, x->block));
	if (s->collective == SCHED_ALLTOALL) {
		jw_key(w, "target");
		jw_uint(w, sched_block_target(s, x->block));
	}
	jw_key(w, "offset");
	jw_double(w, sched_frac(x->offset));
	jw_key(w, "length");
	jw_double(w, sched_frac(x->length));
	if (xfer_blocks(x) > 1) {
		jw_key(w, "blocks");
		jw_uint(w, xfer_blocks(x));
	}
	if (xfer_op(x) == XFER_REDUCE) {
		jw_key(w, "op");
		jw_str(w, "reduce");
	}
	if (wdm) {
		jw_key(w, "direction");
		jw_str(w, xfer_dir(x) == DIR_CW ? "cw" : "ccw");
		jw_key(w, "fibre");
		jw_uint(w, x->fibre);
		jw_key(w, "wavelength");
		jw_uint(w, x->lane);
	} else if (x->lane != SCHED_NO_LANE) {
		jw_key(w, "port");
		jw_uint(w, x->lane);
	}
	if (!wdm && x->run) {
		jw_key(w, "arcs");
		jw_uint(w, xfer_arcs(x));
	}
	jw_obj_end(w);
}

void sched_write_json_members(struct json_writer *w, const struct schedule *s, bool with_steps)
{
	bool wdm = sched_is_wdm(s);

	sched_write_json_head(w, s, s->nsteps, s->nxfers);
	if (with_steps) {
		jw_key(w, "steps");
		jw_arr_begin(w);
		for (uint32_t t = 0; t < s->nsteps; t++) {
			jw_obj_begin(w);
			jw_key(w, "transfers");
			jw_arr_begin(w);
			for (uint32_t i = s->step_start[t]; i < s->step_start[t + 1]; i++)
				sched_write_json_xfer(w, s, &s->xfers[i], wdm);
			jw_arr_end(w);
			jw_obj_end(w);
		}
		jw_arr_end(w);
	}
}

void sched_write_text_xfer(FILE *out, const struct schedule *s, const struct xfer *x, bool wdm)
{
	fprintf(out, "  %u -> %u  block %u", x->src, x->dst, sched_block_origin(s, x->block));
	if (s->collective == SCHED_ALLTOALL)
		fprintf(out, "->%u", sched_block_target(s, x->block));
	if (xfer_blocks(x) > 1)
		fprintf(out, "..%u", x->block + xfer_blocks(x) - 1);
	if (x->offset != 0 || x->length != SCHED_ONE)
		fprintf(out, " [%.6g, %.6g)", sched_frac(x->offset),
			sched_frac(x->offset) + sched_frac(x->length));
	if (xfer_op(x) == XFER_REDUCE)
		fprintf(out, " reduce");
	if (wdm)
		fprintf(out, "  %s fibre %u wavelength %u", xfer_dir(x) == DIR_CW ? "cw" : "ccw",
			x->fibre, x->lane);
	else if (x->lane != SCHED_NO_LANE)
		fprintf(out, "  port %u", x->lane);
	if (!wdm && x->run)
		fprintf(out, " x %u arcs", xfer_arcs(x));
	fprintf(out, "\n");
}

void sched_write_text(FILE *out, const struct schedule *s, uint32_t max_lines)
{
	bool wdm = sched_is_wdm(s);
	uint32_t lines = 0;

	fprintf(out, "%s schedule '%s' on %u nodes: %u steps, %zu transfers\n",
		sched_collective_name(s->collective), s->algorithm, s->nodes, s->nsteps, s->nxfers);
	for (uint32_t t = 0; t < s->nsteps && lines < max_lines; t++) {
		fprintf(out, "step %u: %u transfers\n", t + 1, sched_step_size(s, t));
		lines++;
		for (uint32_t i = s->step_start[t]; i < s->step_start[t + 1] && lines < max_lines;
		     i++, lines++)
			sched_write_text_xfer(out, s, &s->xfers[i], wdm);
	}
	if (lines >= max_lines)
		fprintf(out, "... (--format json -o FILE writes every transfer)\n");
}

struct xfer *sched_append_steps(struct schedule *s, uint32_t k, const size_t *counts)
{
	size_t total = 0, base = s->nxfers;

	for (uint32_t i = 0; i < k; i++)
		total += counts[i];
	if (base + total > UINT32_MAX)
		abort(); /* step offsets are 32-bit: no schedule ofc can hold gets here */
	sched_reserve(s, total);
	for (uint32_t i = 0; i < k; i++) {
		sched_step(s);
		s->nxfers += counts[i];
		s->step_start[s->nsteps] = (uint32_t)s->nxfers;
	}
	/* no transfers yet and none asked for: no array to point into */
	return s->xfers ? s->xfers + base : NULL;
}
