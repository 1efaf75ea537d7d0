/* A symmetry-reduced schedule's expansion written as it goes (see
 * sched.h): step by step, every element of the group applied to the
 * step's program in sched_reduced_expand's order, each transfer written as
 * it is made, so that a file of every transfer (torus:32x32's time-stepped
 * all-to-all: 163 M) costs the program's memory, not 20 bytes a transfer. */
#include "sched/internal.h"

/* Transfers of program step t once expanded: order x its blocks. */
static size_t step_xfers(const struct sched_reduced *r, uint32_t t)
{
	const struct schedule *p = &r->prog;
	size_t count = 0;

	for (size_t i = p->step_start[t]; i < p->step_start[t + 1]; i++)
		count += xfer_blocks(&p->xfers[i]);
	return count * r->group.order;
}

void sched_reduced_write_json_members(struct json_writer *w, const struct sched_reduced *r)
{
	const struct schedule *p = &r->prog;
	bool wdm = sched_is_wdm(p);

	sched_write_json_head(w, p, p->nsteps, (size_t)sched_reduced_transfers(r));
	jw_key(w, "steps");
	jw_arr_begin(w);
	for (uint32_t t = 0; t < p->nsteps; t++) {
		jw_obj_begin(w);
		jw_key(w, "transfers");
		jw_arr_begin(w);
		for (uint32_t e = 0; e < r->group.order; e++) {
			uint32_t g = sched_group_element(&r->group, e);

			for (size_t i = p->step_start[t]; i < p->step_start[t + 1]; i++)
				for (uint32_t j = 0, nb = xfer_blocks(&p->xfers[i]); j < nb; j++) {
					struct xfer x = sched_reduced_piece(r, &p->xfers[i], j, g);

					sched_write_json_xfer(w, p, &x, wdm);
				}
		}
		jw_arr_end(w);
		jw_obj_end(w);
	}
	jw_arr_end(w);
}

void sched_reduced_write_text(FILE *out, const struct sched_reduced *r, uint32_t max_lines)
{
	const struct schedule *p = &r->prog;
	bool wdm = sched_is_wdm(p);
	uint32_t lines = 0;

	fprintf(out, "%s schedule '%s' on %u nodes: %u steps, %zu transfers\n",
		sched_collective_name(p->collective), p->algorithm, r->group.nodes, p->nsteps,
		(size_t)sched_reduced_transfers(r));
	for (uint32_t t = 0; t < p->nsteps && lines < max_lines; t++) {
		fprintf(out, "step %u: %u transfers\n", t + 1, (uint32_t)step_xfers(r, t));
		lines++;
		for (uint32_t e = 0; e < r->group.order && lines < max_lines; e++) {
			uint32_t g = sched_group_element(&r->group, e);

			for (size_t i = p->step_start[t];
			     i < p->step_start[t + 1] && lines < max_lines; i++)
				for (uint32_t j = 0, nb = xfer_blocks(&p->xfers[i]);
				     j < nb && lines < max_lines; j++, lines++) {
					struct xfer x = sched_reduced_piece(r, &p->xfers[i], j, g);

					sched_write_text_xfer(out, p, &x, wdm);
				}
		}
	}
	if (lines >= max_lines)
		fprintf(out, "... (--format json -o FILE writes every transfer)\n");
}
