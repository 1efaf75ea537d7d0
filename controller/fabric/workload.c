/* A training job's workload: freeing it, its kinds of groups by
 * name, and each phase's traffic as bytes between hosts. */
#include "controller/fabric/fabric.h"
#include "sched/sched.h"

#include <stdlib.h>
#include <string.h>

void workload_free(struct workload *w)
{
	if (!w)
		return;
	free(w->name);
	for (uint32_t i = 0; i < w->ngroups; i++) {
		struct wl_group_list *g = &w->groups[i];

		free(g->name);
		for (uint32_t k = 0; k < g->nmembers; k++)
			free(g->members[k]);
		free(g->members);
		free(g->member_locs);
		free(g->first);
	}
	free(w->groups);
	for (uint32_t i = 0; i < w->nphases; i++) {
		struct wl_phase *p = &w->phases[i];

		free(p->name);
		free(p->group);
		free(p->demand);
		free(p->traffic);
		free(p->matrix);
	}
	free(w->phases);
	for (uint32_t i = 0; i < w->nkinds; i++)
		free(w->kinds[i].host);
	free(w->kinds);
	free(w->file);
	free(w->dir);
	memset(w, 0, sizeof(*w));
}

int workload_find_kind(const struct workload *w, const char *name)
{
	for (uint32_t i = 0; i < w->nkinds; i++)
		if (strcmp(w->kinds[i].name, name) == 0)
			return (int)i;
	return -1;
}

const char *workload_collective_name(int collective)
{
	if (collective == WL_SENDRECV)
		return "sendrecv";
	if (collective == 0)
		return "traffic";
	return sched_collective_name((enum sched_collective)collective);
}

void workload_phase_bytes(const struct fabric *f, const struct workload *w, uint32_t p,
			  double **out)
{
	const struct wl_phase *ph = &w->phases[p];
	uint32_t n = f->nhosts;
	double *m = xcalloc((size_t)n * n, sizeof(double));

	*out = m;
	if (ph->collective == 0) {
		for (uint32_t s = 0; s < n; s++)
			for (uint32_t t = 0; t < n; t++)
				m[(size_t)s * n + t] = s == t ? 0 : ph->matrix[(size_t)s * n + t];
		return;
	}
	const struct wl_kind *k = &w->kinds[ph->kind];
	uint32_t sz = k->size;
	double shard = (double)ph->size / sz, mean = 0;

	if (ph->matrix) { /* a demand's relative volumes: their mean pair is 1 */
		for (uint32_t i = 0; i < sz; i++)
			for (uint32_t j = 0; j < sz; j++)
				mean += i != j ? ph->matrix[(size_t)i * sz + j] : 0;
		mean /= (double)sz * (sz - 1);
	}
	for (uint32_t g = 0; g < k->ngroups; g++) {
		const uint32_t *h = k->host + (size_t)g * sz;

		for (uint32_t i = 0; i < sz; i++)
			for (uint32_t j = 0; j < sz; j++) {
				double b = 0;

				if (i == j)
					continue;
				switch (ph->collective) {
				case SCHED_ALLTOALL:
					b = ph->matrix
						? shard * ph->matrix[(size_t)i * sz + j] / mean
						: shard;
					break;
				case SCHED_ALLGATHER:
				case SCHED_REDUCE_SCATTER:
					b = shard;
					break;
				case SCHED_ALLREDUCE:
					b = 2 * shard;
					break;
				case WL_SENDRECV:
					b = (ph->reverse ? i == j + 1 : j == i + 1)
						? (double)ph->size
						: 0;
					break;
				}
				m[(size_t)h[i] * n + h[j]] += b;
			}
	}
}
