/* The fixture of the patch's tests (test_patch.c, test_patch_mirror.c): a
 * Cayley graph from its spec, its failures marked (gone arcs, failed
 * hosts) and built (the degraded graph), its reduced BFB schedule and the
 * patch bfb_patch plans for the failures, with its stats; twin is the
 * graph's arc twins (NULL where it has none). Included by one test file
 * each: its functions are its own. */
#ifndef OFC_TESTS_UNIT_PATCH_FX_H
#define OFC_TESTS_UNIT_PATCH_FX_H

#include <stdlib.h>
#include <string.h>

#include "bfb/bfb.h"
#include "sched/sched.h"

struct fx {
	struct graph *g, *gd;
	struct topo_tree *t;
	struct sched_group G;
	bool *gone;
	uint8_t *dead;
	uint32_t *twin;
	struct sched_reduced r;
	struct sched_patch p;
	struct bfb_stats st; /* the patch's */
};

static void fx_open(struct fx *f, const char *spec, const char *fail, enum sched_collective c)
{
	struct ofc_error err = {0};
	struct bfb_opts o = {.threads = 2};
	struct bfb_stats st;

	memset(f, 0, sizeof(*f));
	if (topo_build_tree(spec, &f->g, &f->t, &err) < 0 ||
	    sched_group_of(f->g, f->t, &f->G, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	f->gone = calloc(f->g->m + 1, sizeof(bool));
	f->dead = calloc(f->g->n, 1);
	uint8_t *dead2 = calloc(f->g->n, 1);
	if (topo_mark_items(f->g, fail, f->gone, f->dead, &err) < 0 ||
	    topo_fail_items(f->g, fail, &f->gd, dead2, &err) < 0)
		fail_msg("%s: %s", fail, err.msg);
	free(dead2);
	f->twin = graph_arc_twins(f->g);
	if (bfb_reduced(f->g, &f->G, c, &o, &f->r, &st, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	if (bfb_patch(f->g, &f->r, f->gone, f->dead, &o, 0, &f->p, &f->st, &err) < 0)
		fail_msg("%s --fail %s: %s", spec, fail, err.msg);
}

static void fx_close(struct fx *f)
{
	sched_patch_free(&f->p);
	sched_reduced_free(&f->r);
	graph_free(f->g);
	graph_free(f->gd);
	topo_tree_free(f->t);
	free(f->gone);
	free(f->dead);
	free(f->twin);
}

#endif
