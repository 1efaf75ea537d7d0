/* Theorem 4's schedule verified from its period (fluid_pipe_verify, see
 * fluid.h): the one chunk's pattern through the verifier with the
 * capacities lifted, then the capacities of every step as the overlap of
 * the K consecutive chunks it holds, from the pattern's loads per layer.
 * Model W's 32 servers: 70 chunks over 77 steps are 35 M transfers when
 * expanded; the pattern is 1/70 of them and the windows a pass over
 * steps x arcs. */
#include "fluid/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The pattern, one chunk of the whole of each block, through sched_verify
 * on vn with no capacity. */
static int pattern_check(const struct fluid_pipe *p, const struct verify_network *vn,
			 struct verify_report *rep)
{
	struct fluid_steps_opts one = {.chunks = 1};
	struct fluid_steps_report brep;
	struct fluid_pipe base;
	struct schedule s;
	struct ofc_error err = {0};
	struct verify_network free_vn = *vn;
	double *bw = xmalloc((vn->narcs + 1) * sizeof(double));
	double *set_bw = xmalloc((vn->nsets + 1) * sizeof(double));
	int rc = -1;

	memset(rep, 0, sizeof(*rep));
	for (uint32_t a = 0; a < vn->narcs; a++)
		bw[a] = INFINITY;
	for (uint32_t k = 0; k < vn->nsets; k++)
		set_bw[k] = INFINITY;
	free_vn.bw = bw;
	free_vn.set_bw = set_bw;
	free_vn.step_times = NULL;
	if (fluid_pipeline(p->net, p->r, &one, &base, &brep, &err) == 0) {
		if (fluid_pipe_expand(&base, &one, &brep, &s, &err) == 0) {
			struct verify_opts vo = {.network = &free_vn};

			rc = sched_verify(&s, &vo, rep);
			sched_free(&s);
		}
		fluid_pipe_free(&base);
	}
	if (err.msg[0]) {
		rep->ok = false;
		snprintf(rep->error, sizeof(rep->error), "the pattern: %.300s", err.msg);
	}
	free(bw);
	free(set_bw);
	return rc;
}

static int capacity_fail(struct verify_report *rep, uint32_t step, const char *what, double load,
			 double lim)
{
	rep->ok = false;
	rep->bad_step = step;
	rep->bad_xfer = SIZE_MAX;
	snprintf(rep->error, sizeof(rep->error),
		 "step %u: %s carries %.9g blocks, over its %.9g (step time x bandwidth)", step + 1,
		 what, load, lim);
	return -1;
}

/* The pattern's load (blocks, each piece's hi - lo) and transfers on each
 * arc at each layer, layer t at [t * narcs]. */
static void layer_loads(const struct fluid_pipe *p, double *load, uint32_t *count)
{
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t m = p->net->narcs;

	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];

		for (uint32_t h = 0; h < q->nhops; h++) {
			size_t at =
			    (size_t)rt->hop_layer[q->first + h] * m + rt->hop_arc[q->first + h];

			load[at] += q->hi - q->lo;
			count[at]++;
		}
	}
}

/* Every step's arcs and capacity sets: step s (forward) holds layer t of
 * chunk s - t for the layers t in (s - K, s], each at 1/K of the
 * pattern's load; a reduction runs the same steps backwards. Tolerances as
 * the verifier's: relative, and 2^-31 a transfer for the fixed point. */
static int window_check(const struct fluid_pipe *p, const struct verify_network *vn,
			struct verify_report *rep)
{
	uint32_t m = vn->narcs, T = p->hops, K = p->chunks;
	double *load = xcalloc((size_t)T * m + 1, sizeof(double));
	uint32_t *count = xcalloc((size_t)T * m + 1, sizeof(uint32_t));
	double *a_load = xmalloc((m + 1) * sizeof(double));
	double *a_count = xmalloc((m + 1) * sizeof(double));
	double tol = vn->tolerance > 0 ? vn->tolerance : 1e-9, ulp = 1.0 / SCHED_ONE;
	double st = vn->step_time;
	char what[96];
	int rc = 0;

	layer_loads(p, load, count);
	for (uint32_t s = 0; s < p->steps && rc == 0; s++) {
		uint32_t t0 = s + 1 > K ? s + 1 - K : 0, t1 = s < T - 1 ? s : T - 1;
		uint32_t step = p->rev ? p->steps - 1 - s : s;

		for (uint32_t a = 0; a < m; a++) {
			a_load[a] = a_count[a] = 0;
			for (uint32_t t = t0; t <= t1; t++) {
				a_load[a] += load[(size_t)t * m + a];
				a_count[a] += count[(size_t)t * m + a];
			}
			a_load[a] /= K;
			if (isinf(vn->bw[a]))
				continue;
			double lim = st * vn->bw[a];

			if (lim > 0 && a_load[a] / lim > rep->max_utilisation)
				rep->max_utilisation = a_load[a] / lim;
			if (rc == 0 && a_load[a] > lim * (1 + tol) + ulp * a_count[a]) {
				snprintf(what, sizeof(what), "arc %u -> %u", vn->tail[a],
					 vn->head[a]);
				rc = capacity_fail(rep, step, what, a_load[a], lim);
			}
		}
		for (uint32_t k = 0; k < vn->nsets && rc == 0; k++) {
			double sl = 0, sc = 0, lim = st * vn->set_bw[k];

			for (uint32_t j = vn->set_off[k]; j < vn->set_off[k + 1]; j++) {
				sl += a_load[vn->set_arc[j]];
				sc += a_count[vn->set_arc[j]];
			}
			if (lim > 0 && sl / lim > rep->max_utilisation)
				rep->max_utilisation = sl / lim;
			if (sl > lim * (1 + tol) + ulp * sc) {
				snprintf(what, sizeof(what), "capacity set %u", k);
				rc = capacity_fail(rep, step, what, sl, lim);
			}
		}
	}
	free(load);
	free(count);
	free(a_load);
	free(a_count);
	return rc;
}

int fluid_pipe_verify(const struct fluid_pipe *p, const struct verify_network *vn,
		      struct verify_report *rep)
{
	int rc = pattern_check(p, vn, rep);

	/* The expansion's figures: its steps and transfers; duplicates and
	 * cost are the pattern's, which the chunks share out. */
	rep->nsteps = p->steps;
	rep->ntransfers = p->ntransfers;
	rep->max_utilisation = 0;
	if (rc == 0)
		rc = window_check(p, vn, rep);
	rep->ok = rc == 0;
	return rc;
}
