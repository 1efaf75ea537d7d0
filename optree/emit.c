/* Steps of a ring schedule: the emitter that closes steps and splits them
 * for the per-node add/drop limit, stages of a result, and fixed-route
 * demands coloured through rwa/ and laid on steps. Shared by the builders
 * (build.c, wrht.c, collectives.c).
 *
 * A stage's colours are cut into steps of F*W channels; colour c of a
 * direction is channel c mod F*W of step c / (F*W) (rwa_channel()). Every
 * step then goes through the per-node add/drop check: a step in which some
 * node would add or drop more lightpaths than its MRRs allow is split into
 * as many steps as it takes (a subset of a conflict-free step is
 * conflict-free, and data held before the step is still held after it).
 */
#include "optree/internal.h"

#include <stdlib.h>
#include <string.h>

void optree_result_free(struct optree_result *res)
{
	sched_free(&res->sched);
	free(res->stage);
	free(res->period);
	memset(res, 0, sizeof(*res));
}

/* ---- steps and the add/drop limit -----------------------------------------
 * Transfers go straight into the schedule (reserved in advance); a step
 * that breaks the limit is taken out again and put back as sub-steps. */

void emitter_init(struct emitter *e, const struct optree_ring *r, struct schedule *s)
{
	memset(e, 0, sizeof(*e));
	e->r = r;
	e->s = s;
	e->add = xcalloc(r->nodes, sizeof(uint32_t));
	e->drop = xcalloc(r->nodes, sizeof(uint32_t));
}

void emitter_free(struct emitter *e)
{
	free(e->add);
	free(e->drop);
	free(e->sub);
	free(e->path);
}

/* Close the step; returns the schedule steps it became (1, or more when
 * split for the add/drop limit). */
uint32_t emit_flush(struct emitter *e)
{
	struct schedule *s = e->s;
	uint32_t A = e->r->max_add, n = e->r->nodes, nsub = 1;
	size_t begin = s->step_start[s->nsteps - 1], m = s->nxfers - begin;
	struct xfer *x = s->xfers + begin;
	bool over = false;

	if (!e->open)
		return 0;
	e->open = false;
	s->step_start[s->nsteps] = (uint32_t)s->nxfers;
	for (size_t k = 0; k < m; k++) {
		if (++e->add[x[k].src] > A)
			over = true;
		if (++e->drop[x[k].dst] > A)
			over = true;
	}
	for (size_t k = 0; k < m; k++)
		e->add[x[k].src] = e->drop[x[k].dst] = 0;
	if (!over)
		return 1;
	/* The fewest sub-steps: the lightpaths are the edges of a bipartite
	 * multigraph (adding nodes, dropping nodes) of largest degree D. Colour
	 * its edges with D colours (Koenig: for each edge take a colour free at
	 * its sender; if it is taken at the receiver, swap two colours along
	 * the alternating path from there, which cannot come back to the
	 * sender) and put max_add colours in each sub-step: ceil(D / max_add)
	 * sub-steps, which no split can beat (a node with D lightpaths needs
	 * that many). */
	uint32_t D = 0;
	for (size_t k = 0; k < m; k++) {
		if (++e->add[x[k].src] > D)
			D = e->add[x[k].src];
		if (++e->drop[x[k].dst] > D)
			D = e->drop[x[k].dst];
	}
	for (size_t k = 0; k < m; k++)
		e->add[x[k].src] = e->drop[x[k].dst] = 0;
	if (m > e->cap_sub) {
		e->cap_sub = m;
		e->sub = xreallocarray(e->sub, m, sizeof(uint32_t));
		e->path = xreallocarray(e->path, m, sizeof(uint32_t));
	}
	/* at[side][node * D + colour]: the edge there, or UINT32_MAX. */
	uint32_t *at[2];
	at[0] = xmalloc((size_t)n * D * sizeof(uint32_t));
	at[1] = xmalloc((size_t)n * D * sizeof(uint32_t));
	memset(at[0], 0xff, (size_t)n * D * sizeof(uint32_t));
	memset(at[1], 0xff, (size_t)n * D * sizeof(uint32_t));
	for (size_t k = 0; k < m; k++) {
		uint32_t u = x[k].src, v = x[k].dst, a = 0, b = 0;

		while (at[0][(size_t)u * D + a] != UINT32_MAX)
			a++;
		while (at[1][(size_t)v * D + b] != UINT32_MAX)
			b++;
		if (at[1][(size_t)v * D + a] != UINT32_MAX) {
			/* The path from v along colours a, b, a, ...: swap a and b
			 * on it, which frees a at v (it never reaches u). */
			size_t np = 0;
			uint32_t w = v, side = 1, c = a;

			while (at[side][(size_t)w * D + c] != UINT32_MAX) {
				uint32_t f = at[side][(size_t)w * D + c];

				e->path[np++] = f;
				w = side ? x[f].src : x[f].dst;
				side = !side;
				c = c == a ? b : a;
			}
			for (size_t i = 0; i < np; i++) {
				uint32_t f = e->path[i], cf = e->sub[f];

				at[0][(size_t)x[f].src * D + cf] = UINT32_MAX;
				at[1][(size_t)x[f].dst * D + cf] = UINT32_MAX;
			}
			for (size_t i = 0; i < np; i++) {
				uint32_t f = e->path[i], cf = e->sub[f] == a ? b : a;

				e->sub[f] = cf;
				at[0][(size_t)x[f].src * D + cf] = f;
				at[1][(size_t)x[f].dst * D + cf] = f;
			}
		}
		at[0][(size_t)u * D + a] = (uint32_t)k;
		at[1][(size_t)v * D + a] = (uint32_t)k;
		e->sub[k] = a;
	}
	free(at[0]);
	free(at[1]);
	for (size_t k = 0; k < m; k++) {
		e->sub[k] /= A;
		if (e->sub[k] + 1 > nsub)
			nsub = e->sub[k] + 1;
	}
	struct xfer *tmp = xmalloc(m * sizeof(*tmp));
	memcpy(tmp, x, m * sizeof(*tmp));
	s->nxfers = begin;
	for (uint32_t j = 0; j < nsub; j++) {
		if (j)
			sched_step(s);
		for (size_t k = 0; k < m; k++)
			if (e->sub[k] == j)
				s->xfers[s->nxfers++] = tmp[k];
		s->step_start[s->nsteps] = (uint32_t)s->nxfers;
	}
	free(tmp);
	e->split_steps += nsub - 1;
	return nsub;
}

struct optree_stage *result_add_stage(struct optree_result *res, uint32_t *cap)
{
	if (res->nstages == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		res->stage = xreallocarray(res->stage, *cap, sizeof(*res->stage));
	}
	struct optree_stage *st = &res->stage[res->nstages++];
	memset(st, 0, sizeof(*st));
	st->first_step = res->sched.nsteps;
	st->groups = 1;
	return st;
}

/* Wavelengths for demands whose routes are fixed, through rwa/ like every
 * other lightpath: exact interval colouring per direction (neighbour links
 * never wrap), the circular heuristic if some arc does. Runs by arc index. */
void colour_fixed(uint32_t n, const struct ot_arc *arc, size_t na, struct rwa_solution *sol)
{
	struct rwa_arc *ra = xmalloc((na + 1) * sizeof(*ra));

	rwa_solution_reset(sol);
	for (int d = 1; d <= 2; d++) {
		size_t k = 0;
		bool wraps = false;

		for (size_t i = 0; i < na; i++)
			if (arc[i].dir == d) {
				uint32_t s = rwa_arc_start(n, arc[i].src, arc[i].dst, d);
				uint32_t len = rwa_arc_len(n, arc[i].src, arc[i].dst, d);

				ra[k++] = (struct rwa_arc){s, len, arc[i].count, (uint32_t)i};
				wraps |= s + len > n;
			}
		if (wraps)
			rwa_color_circle(n, ra, k, d, sol);
		else
			rwa_color_line(n, ra, k, d, sol);
	}
	free(ra);
}

uint32_t colour_steps(const struct optree_ring *r, const struct rwa_solution *sol)
{
	uint32_t c = sol->colours[RWA_CW] > sol->colours[RWA_CCW] ? sol->colours[RWA_CW]
								  : sol->colours[RWA_CCW];

	return (c + ring_channels(r) - 1) / ring_channels(r);
}

/* One stage of fixed-route demands: the blocks of arc i are blk[i][0..count),
 * laid on the arc's colours in order, colour steps in order. */
void emit_fixed(struct emitter *e, const struct ot_arc *arc, const struct rwa_solution *sol,
		const uint32_t *blk, uint32_t per_arc, struct optree_stage *st)
{
	uint32_t FW = ring_channels(e->r), cs = colour_steps(e->r, sol);

	for (uint32_t t = 0; t < cs; t++) {
		for (size_t k = 0, inst = 0; k < sol->nruns; k++) {
			const struct rwa_run *ru = &sol->runs[k];

			inst = (k && sol->runs[k - 1].id == ru->id) ? inst + sol->runs[k - 1].count
								    : 0;
			for (uint32_t c = 0; c < ru->count; c++)
				if ((ru->colour + c) / FW == t)
					emit_put(e, arc[ru->id].src, arc[ru->id].dst,
						 blk[(size_t)ru->id * per_arc + inst + c], ru->dir,
						 (ru->colour + c) % FW);
		}
		st->steps += emit_flush(e);
	}
	st->colour_steps = cs;
}
