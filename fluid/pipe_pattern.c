/* Theorem 4's pattern checked: one chunk of the whole of each block
 * through the verifier with the capacities lifted proves delivery,
 * causality and what each vertex may store, copy and reduce for every
 * chunk (fluid/pipe.c checks the capacities of the overlapping chunks). */
#include "fluid/internal.h"
#include "fluid/pipe_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The pattern, one chunk of the whole of each block, through sched_verify
 * on vn with no capacity. */
int pipe_pattern_check(const struct fluid_pipe *p, const struct verify_network *vn,
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
