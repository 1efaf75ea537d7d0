/* Degraded schedules kept as structure (sched/patch.c, bfb/patch.c): BFB
 * on a torus with failed links, ports and many ports as the healthy
 * reduced schedule plus a patch. The patch's check agrees with the
 * explicit verifier on the expansion (on the degraded graph), the
 * patched schedule's link loads are the explicit degraded BFB's, a
 * corrupted patch is refused, the healthy schedule is left as it was (a
 * restore is dropping the patch), and failures that disconnect the
 * fabric are refused naming the nodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bfb/bfb.h"
#include "bfb/patch_internal.h"
#include "sched/internal.h"
#include "sched/patch_check.h"
#include "sched/sched.h"
#include "tests/unit/patch_fx.h"

/* The patch's check against the explicit one on the expansion, and the
 * link loads against the explicit degraded BFB's: never below them (each
 * node's problem has the explicit one's optimum at best), above by at
 * most tol (a share; < 0: not checked). */
static void agrees(struct fx *f, double tol)
{
	struct verify_report pr = {0}, er = {0}, dr = {0};
	/* failed hosts: the expansion names the whole graph's nodes, the
	 * explicit BFB runs on the survivors, renumbered (as ofc schedule's
	 * explicit path does) */
	struct verify_opts vo = {.graph = f->gd, .absent = f->p.nabsent ? f->dead : NULL};
	struct graph *alive = NULL;
	uint32_t *keep = NULL, nkeep = f->g->n;
	struct schedule s, d;
	struct ofc_error err = {0};
	struct bfb_stats st;
	struct bfb_opts o = {.threads = 2};

	if (sched_verify_patched(&f->r, &f->p, f->g, f->gone, &pr) < 0)
		fail_msg("%s: patched: %s", f->g->spec, pr.error);
	if (sched_patched_expand(&f->r, &f->p, f->g, f->gone, &s, &err) < 0)
		fail_msg("expand: %s", err.msg);
	if (sched_verify(&s, &vo, &er) < 0)
		fail_msg("%s: the expansion: %s", f->g->spec, er.error);
	assert_int_equal(pr.ntransfers, er.ntransfers);
	assert_int_equal(pr.nsteps, er.nsteps);
	assert_true(fabs(pr.sum_max_link_load - er.sum_max_link_load) < 1e-9);
	assert_true(fabs(pr.max_link_load - er.max_link_load) < 1e-9);
	/* today's explicit degraded BFB: the same U* every step */
	if (f->p.nabsent) {
		alive = topo_survivors(f->gd, f->dead, f->gd->spec, &keep, &nkeep);
		assert_int_equal(nkeep, f->g->n - f->p.nabsent);
	}
	if (bfb_schedule(alive ? alive : f->gd, f->r.prog.collective, &o, &d, &st, &err) < 0)
		fail_msg("explicit: %s", err.msg);
	if (sched_verify(&d, &(struct verify_opts){.graph = alive ? alive : f->gd}, &dr) < 0)
		fail_msg("explicit: %s", dr.error);
	if (pr.sum_max_link_load < dr.sum_max_link_load * (1 - 1e-9) ||
	    (tol >= 0 && pr.sum_max_link_load > dr.sum_max_link_load * (1 + tol)))
		fail_msg("%s: link loads %.6f, the explicit degraded BFB's %.6f", f->g->spec,
			 pr.sum_max_link_load, dr.sum_max_link_load);
	/* and fewer transfers planned than the fabric's */
	assert_true(f->p.prog.nxfers < d.nxfers);
	sched_free(&d);
	sched_free(&s);
	graph_free(alive);
	free(keep);
}

/* The patch's transfers node u owns. */
static size_t owned(const struct fx *f, uint32_t u)
{
	size_t k = 0;

	for (size_t i = 0; i < f->p.prog.nxfers; i++)
		k += xfer_owner(&f->p.prog.xfers[i]) == u;
	return k;
}

static void test_one_link(void **state)
{
	(void)state;
	enum sched_collective cs[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER, SCHED_ALLREDUCE};

	for (size_t i = 0; i < 3; i++) {
		struct fx f;

		fx_open(&f, "torus:16x16", "5-6", cs[i]);
		/* solved whole only the link's ends, the rest by block; of the
		 * ends, the blocks that came out as the healthy ones are kept */
		assert_int_equal(f.st.whole, 2);
		assert_int_equal(f.p.nregion, 0);
		assert_true(owned(&f, 5) > 0 && owned(&f, 6) > 0);
		assert_true(owned(&f, 5) < (i == 2 ? 2 : 1) * 255);
		agrees(&f, 0.02);
		fx_close(&f);
	}
}

/* Whether the patch's reduction step R - 1 - j is its copy step R + j's
 * transfers mirrored, in order, for every j. */
static bool patch_mirrored(const struct fx *f)
{
	const struct schedule *q = &f->p.prog;
	uint32_t R = q->nsteps / 2, *twin = graph_arc_twins(f->g);
	bool same = twin && q->nsteps == 2 * R;

	for (uint32_t j = 0; same && j < R; j++) {
		uint32_t c = R + j, d = R - 1 - j;

		same = sched_step_size(q, c) == sched_step_size(q, d);
		for (uint32_t i = 0; same && i < sched_step_size(q, c); i++) {
			struct xfer y =
			    sched_xfer_mirror(f->g, twin, &q->xfers[q->step_start[c] + i]);

			same = !memcmp(&y, &q->xfers[q->step_start[d] + i], sizeof(y));
		}
	}
	free(twin);
	return same;
}

/* An allreduce whose failures take both ways of each link (links, a host)
 * on a torus solves its copies only and writes its reductions as their
 * mirror, which the check takes as it takes a solved phase, at the
 * explicit BFB's time; one way of a link (a port's arc) solves both. */
static void test_mirrored_allreduce(void **state)
{
	(void)state;
	const char *both[] = {"5-6,40-41,100-101", "21", "21,100-101"};
	struct fx f;

	for (size_t i = 0; i < 3; i++) {
		fx_open(&f, "torus:16x16", both[i], SCHED_ALLREDUCE);
		assert_true(f.st.mirrored);
		assert_true(f.p.prog.nxfers > 0);
		assert_true(patch_mirrored(&f));
		agrees(&f, 0.02);
		fx_close(&f);
	}
	fx_open(&f, "torus:16x16", "5-6,7>8", SCHED_ALLREDUCE);
	assert_false(f.st.mirrored);
	agrees(&f, 0.02);
	fx_close(&f);
	fx_open(&f, "torus:16x16", "5-6", SCHED_ALLGATHER);
	assert_false(f.st.mirrored);
	fx_close(&f);
}

static void test_one_port_and_3d(void **state)
{
	(void)state;
	struct fx f;

	fx_open(&f, "torus:6x6", "7>8", SCHED_ALLREDUCE); /* one arc: a port */
	agrees(&f, -1);
	fx_close(&f);
	fx_open(&f, "torus:4x4x4", "0-1,21-37", SCHED_ALLGATHER);
	agrees(&f, -1);
	fx_close(&f);
}

/* A failed host: the others run the collective among themselves, on the
 * healthy program less the host's block and what it relayed. Only its
 * neighbours (they lost a link) are solved whole; the expansion passes the
 * explicit verifier with the host absent, and the link loads are the
 * explicit survivors' BFB's within 2%, with a link failed beside it too. */
static void test_failed_host(void **state)
{
	(void)state;
	enum sched_collective cs[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER, SCHED_ALLREDUCE};

	for (size_t i = 0; i < 3; i++) {
		struct fx f;

		fx_open(&f, "torus:16x16", "21", cs[i]);
		assert_int_equal(f.p.nabsent, 1);
		assert_int_equal(f.p.absent[0], 21);
		/* its four neighbours solved whole, not the host */
		assert_int_equal(f.st.whole, 4);
		assert_true(owned(&f, 5) && owned(&f, 20) && owned(&f, 22) && owned(&f, 37));
		assert_int_equal(owned(&f, 21), 0);
		agrees(&f, 0.02);
		fx_close(&f);
	}
	struct fx f;
	fx_open(&f, "torus:16x16", "21,100-101,7>8", SCHED_ALLREDUCE);
	assert_int_equal(f.p.nabsent, 1);
	agrees(&f, 0.02);
	fx_close(&f);
	fx_open(&f, "torus:4x4x4", "0,42", SCHED_ALLGATHER);
	assert_int_equal(f.p.nabsent, 2);
	agrees(&f, -1);
	fx_close(&f);
}

/* 1% of the arcs of torus:32x32 failed at random (a fixed seed), both
 * directions of each link: the patched schedule's link loads within 2% of
 * the explicit degraded BFB's (agrees); and with two hosts failed beside
 * them, of the explicit survivors' BFB's. */
static void test_one_percent(void **state)
{
	(void)state;
	char list[4096];
	size_t len = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	struct graph *g;
	struct topo_tree *t;
	struct ofc_error err = {0};

	if (topo_build_tree("torus:32x32", &g, &t, &err) < 0)
		fail_msg("%s", err.msg);
	uint8_t *used = calloc(g->n, 1);
	for (uint32_t k = 0; k < g->m / 200; k++) { /* 1% of the ports: links */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t u = (uint32_t)(x % g->n), j = (uint32_t)(x >> 32) % graph_outdeg(g, u);
		uint32_t v = graph_out(g, u)[j];

		if (used[u] || used[v]) /* keep it connected and every failure once */
			continue;
		used[u] = used[v] = 1;
		len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%u-%u", len ? "," : "",
					u, v);
	}
	char hosts[sizeof(list) + 32];
	uint32_t h1 = 100, h2 = 700;
	while (used[h1])
		h1++;
	while (used[h2])
		h2++;
	snprintf(hosts, sizeof(hosts), "%s,%u,%u", list, h1, h2);
	free(used);
	graph_free(g);
	topo_tree_free(t);
	struct fx f;
	fx_open(&f, "torus:32x32", list, SCHED_ALLREDUCE);
	agrees(&f, 0.02);
	fx_close(&f);
	fx_open(&f, "torus:32x32", hosts, SCHED_ALLREDUCE);
	assert_int_equal(f.p.nabsent, 2);
	agrees(&f, 0.02);
	fx_close(&f);
}

/* A copy of f's patch with transfer xi changed by how: 0 dropped, 1 a
 * step earlier, 2 twice, 3 over the next port, 4 a step later. */
static void corrupt(const struct fx *f, size_t xi, int how, struct sched_patch *out)
{
	const struct schedule *q = &f->p.prog;

	out->nregion = f->p.nregion;
	out->region = malloc((f->p.nregion + 1) * sizeof(uint32_t));
	memcpy(out->region, f->p.region, f->p.nregion * sizeof(uint32_t));
	sched_init(&out->prog, q->collective, q->algorithm, q->nodes);
	for (uint32_t t = 0; t < q->nsteps; t++) {
		sched_step(&out->prog);
		for (size_t i = q->step_start[t]; i < q->step_start[t + 1]; i++) {
			struct xfer y = q->xfers[i];

			if (i == xi && how == 0)
				continue;
			if (i == xi && (how == 1 || how == 4))
				continue;
			if (i == xi && how == 3)
				y.lane = (uint16_t)((y.lane + 1) % graph_outdeg(f->g, y.src));
			sched_add(&out->prog, &y);
			if (i == xi && how == 2)
				sched_add(&out->prog, &y);
		}
		if (t > 0 && xi >= q->step_start[t - 1] && xi < q->step_start[t] && how == 4)
			sched_add(&out->prog, &q->xfers[xi]);
		/* the moved one lands in the step before its own */
		if (t + 1 < q->nsteps && xi >= q->step_start[t + 1] && xi < q->step_start[t + 2] &&
		    how == 1)
			sched_add(&out->prog, &q->xfers[xi]);
	}
}

/* A corrupted patch is refused, or (a block planned again whole whose
 * healthy pieces were right: dropping it keeps those) its expansion passes
 * the explicit verifier too; most are refused. */
/* A piece as the whole-node test compares it. */
struct wpiece {
	uint32_t step, reduce, block, src, dst, lane, offset, length;
};

static int cmp_by_block(const void *a, const void *b)
{
	const struct wpiece *x = a, *y = b;

	if (x->reduce != y->reduce)
		return x->reduce < y->reduce ? -1 : 1;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return 0;
}

/* Whether the k pieces e (one block at owner u) are the healthy program's
 * translate by u exactly, step for step. */
static bool is_healthy_translate(const struct fx *f, uint32_t u, const struct wpiece *e, size_t k)
{
	const struct schedule *b = &f->r.prog;
	size_t found = 0, base = 0;

	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t + 1]; i++) {
			struct xfer z =
			    sched_reduced_move(&f->r, &b->xfers[i], sched_group_element(&f->G, u));
			struct wpiece w = {t,	     xfer_op(&z) == XFER_REDUCE,
					   z.block,  z.src,
					   z.dst,    z.lane,
					   z.offset, z.length};

			if (w.reduce != e[0].reduce || w.block != e[0].block)
				continue;
			base++;
			for (size_t j = 0; j < k; j++)
				found += memcmp(&w, &e[j], sizeof(w)) == 0;
		}
	return base == k && found == k;
}

static int cmp_by_link(const void *a, const void *b)
{
	const struct wpiece *x = a, *y = b;
	uint32_t kx[4] = {x->step, x->src, x->dst, x->lane},
		 ky[4] = {y->step, y->src, y->dst, y->lane};

	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* Each step's total and largest link load (SCHED_ONE units) of the
 * pieces e (one owner's): what the owner's
 * problems are (their sources, by distance) and what they cost. */
static void step_loads(struct wpiece *e, size_t ne, uint32_t nsteps, uint64_t *total,
		       uint64_t *most)
{
	memset(total, 0, nsteps * sizeof(uint64_t));
	memset(most, 0, nsteps * sizeof(uint64_t));
	qsort(e, ne, sizeof(*e), cmp_by_link);
	for (size_t i = 0, j; i < ne; i = j) {
		uint64_t load = 0;

		for (j = i; j < ne && cmp_by_link(&e[j], &e[i]) == 0; j++)
			load += e[j].length;
		total[e[i].step] += load;
		if (load > most[e[i].step])
			most[e[i].step] = load;
	}
}

/* Node u's program in the patched schedule: the patch's pieces it owns,
 * and the healthy translate of every (phase, block) the patch does not
 * plan there. Returns the pieces' count; *planned the blocks planned. */
static size_t patched_program(const struct fx *f, uint32_t u, struct wpiece *out, size_t *planned)
{
	const struct schedule *q = &f->p.prog, *b = &f->r.prog;
	uint32_t n = f->g->n;
	uint8_t *mine = calloc(2 * (size_t)n, 1);
	size_t np = 0;

	*planned = 0;
	for (uint32_t t = 0; t < q->nsteps; t++)
		for (size_t i = q->step_start[t]; i < q->step_start[t + 1]; i++) {
			const struct xfer *x = &q->xfers[i];
			size_t key = (size_t)(xfer_op(x) == XFER_REDUCE) * n + x->block;

			if (xfer_owner(x) != u)
				continue;
			*planned += !mine[key];
			mine[key] = 1;
			out[np++] = (struct wpiece){t,	       xfer_op(x) == XFER_REDUCE,
						    x->block,  x->src,
						    x->dst,    x->lane,
						    x->offset, x->length};
		}
	for (uint32_t t = 0; t < b->nsteps; t++)
		for (size_t i = b->step_start[t]; i < b->step_start[t + 1]; i++) {
			struct xfer z =
			    sched_reduced_move(&f->r, &b->xfers[i], sched_group_element(&f->G, u));

			if (!mine[(size_t)(xfer_op(&z) == XFER_REDUCE) * n + z.block])
				out[np++] = (struct wpiece){t,	      xfer_op(&z) == XFER_REDUCE,
							    z.block,  z.src,
							    z.dst,    z.lane,
							    z.offset, z.length};
		}
	free(mine);
	return np;
}

/* A node that lost an in-link is solved whole, on the degraded graph, as
 * the explicit degraded BFB solves it: the same sources at each step
 * (each step's load in total) at the same cost (each step's largest link
 * load, U* of the problem), with the fractions' flow started from the
 * healthy program's, so that the patch plans fewer of its blocks than
 * differ between the explicit's and the healthy translate (the blocks it
 * does not plan keep the base's pieces). Fails when the whole solve reads
 * a wrong distance (its rows come from the raised sets, not a search of
 * the degraded graph), a source is kept or left out wrongly, or the
 * flows start cold. */
static void test_whole_nodes_as_explicit(void **state)
{
	(void)state;
	const char *fails[] = {"5-6,40>41", "100-101,7>8"};
	enum sched_collective cs[] = {SCHED_ALLREDUCE, SCHED_ALLGATHER};

	for (size_t c = 0; c < 2; c++) {
		struct fx f;
		struct schedule d;
		struct bfb_stats st;
		struct ofc_error err = {0};
		struct bfb_opts o = {.threads = 2};

		fx_open(&f, "torus:16x16", fails[c], cs[c]);
		if (bfb_schedule(f.gd, cs[c], &o, &d, &st, &err) < 0)
			fail_msg("explicit: %s", err.msg);
		uint32_t n = f.g->n, checked = 0, *tails = graph_arc_tails(f.g), S = d.nsteps;
		size_t moved = 0, planned_all = 0;
		struct wpiece *e = calloc(d.nxfers + 1, sizeof(*e)),
			      *p = calloc(f.p.prog.nxfers + f.r.prog.nxfers + 1, sizeof(*p));
		uint64_t *et = calloc(4 * (size_t)S, sizeof(uint64_t)), *em = et + S, *pt = em + S,
			 *pm = pt + S;

		assert_int_equal(S, f.p.prog.nsteps);
		/* the reductions' steps first (an allreduce's half) */
		uint32_t rsteps = cs[c] == SCHED_ALLREDUCE ? S / 2 : 0;
		for (uint32_t u = 0; u < n; u++) {
			bool head = false, tail = false;

			for (uint32_t a = 0; a < f.g->m; a++) {
				head |= f.gone[a] && f.g->adj[a] == u;
				tail |= f.gone[a] && cs[c] != SCHED_ALLGATHER && tails[a] == u;
			}
			if (!head && !tail)
				continue;
			size_t ne = 0, np, planned;
			for (uint32_t t = 0; t < d.nsteps; t++)
				for (size_t i = d.step_start[t]; i < d.step_start[t + 1]; i++) {
					const struct xfer *x = &d.xfers[i];
					uint32_t k = x->lane, a = f.g->off[x->src];

					if (xfer_owner(x) != u)
						continue;
					for (;; a++) /* gd's k-th port of src is g's a */
						if (!f.gone[a] && k-- == 0)
							break;
					e[ne++] =
					    (struct wpiece){t,	       xfer_op(x) == XFER_REDUCE,
							    x->block,  x->src,
							    x->dst,    a - f.g->off[x->src],
							    x->offset, x->length};
				}
			np = patched_program(&f, u, p, &planned);
			/* the explicit's blocks that are not the base's */
			qsort(e, ne, sizeof(*e), cmp_by_block);
			for (size_t i = 0, j; i < ne; i = j) {
				for (j = i; j < ne && cmp_by_block(&e[j], &e[i]) == 0; j++)
					;
				moved += !is_healthy_translate(&f, u, e + i, j - i);
			}
			step_loads(e, ne, S, et, em);
			step_loads(p, np, S, pt, pm);
			/* solved whole in the phases where it lost an in-link of
			 * H: the copies' where it is a failed arc's head, the
			 * reductions' where it is one's tail */
			uint32_t lo = tail ? 0 : rsteps, hi = head ? S : rsteps;
			assert_memory_equal(et + lo, pt + lo, (hi - lo) * sizeof(uint64_t));
			assert_memory_equal(em + lo, pm + lo, (hi - lo) * sizeof(uint64_t));
			assert_true(planned > 0);
			planned_all += planned;
			checked++;
		}
		assert_int_equal(checked, f.st.whole);
		assert_true(planned_all < moved);
		free(et);
		free(tails);
		free(e);
		free(p);
		sched_free(&d);
		fx_close(&f);
	}
}

static void test_corrupted_patch(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report rep, er;
	struct ofc_error err = {0};
	uint32_t refused = 0, tried = 0;

	fx_open(&f, "torus:8x8", "5-6", SCHED_ALLREDUCE);
	struct verify_opts vo = {.graph = f.gd};
	const struct schedule *q = &f.p.prog;
	for (size_t xi = 0; xi < q->nxfers; xi += q->nxfers / 23 + 1)
		for (int how = 0; how < 4; how++) {
			struct sched_patch bad = {0};
			struct schedule s;
			uint32_t t = 0;

			while (q->step_start[t + 1] <= xi)
				t++;
			if (how == 1 && (t == 0 || t == q->nsteps / 2))
				continue; /* no step before it in its phase */
			corrupt(&f, xi, how, &bad);
			tried++;
			if (sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep) < 0) {
				refused++;
			} else {
				if (sched_patched_expand(&f.r, &bad, f.g, f.gone, &s, &err) < 0)
					fail_msg("expand: %s", err.msg);
				if (sched_verify(&s, &vo, &er) < 0)
					fail_msg(
					    "transfer %zu changed (%d): the patch check passes, "
					    "the explicit one says %s",
					    xi, how, er.error);
				sched_free(&s);
			}
			sched_patch_free(&bad);
		}
	assert_true(refused * 4 >= tried * 3);
	/* a region node whose program is not all there */
	struct sched_patch bad = {0};
	corrupt(&f, SIZE_MAX, 0, &bad);
	bad.region = realloc(bad.region, (bad.nregion + 1) * sizeof(uint32_t));
	bad.region[bad.nregion++] = 63;
	assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
	if (!strstr(rep.error, "node 63: ") || !strstr(rep.error, "of the 63 blocks it needs"))
		fail_msg("%s", rep.error);
	sched_patch_free(&bad);
	/* no patch at all: the base's nodes still use the failed link */
	struct sched_patch none = {0};
	sched_init(&none.prog, q->collective, q->algorithm, q->nodes);
	assert_int_equal(sched_verify_patched(&f.r, &none, f.g, f.gone, &rep), -1);
	assert_non_null(strstr(rep.error, "failed arc"));
	sched_patch_free(&none);
	fx_close(&f);
}

/* A failed host's patch corrupted: refused each time. */
static void test_failed_host_corrupted(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report rep;

	fx_open(&f, "torus:8x8", "9", SCHED_ALLREDUCE);
	assert_int_equal(sched_verify_patched(&f.r, &f.p, f.g, f.gone, &rep), 0);
	/* the host not said to be absent: its own base program still runs
	 * over its failed arcs */
	struct sched_patch bad = {0};
	corrupt(&f, SIZE_MAX, 0, &bad);
	assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
	assert_non_null(strstr(rep.error, "node 9 (unpatched) receives block"));
	assert_non_null(strstr(rep.error, "over the failed arc"));
	/* a patch transfer that moves the host's block (or shard) */
	bad.nabsent = f.p.nabsent;
	bad.absent = malloc(sizeof(uint32_t));
	bad.absent[0] = 9;
	assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), 0);
	size_t xi = bad.prog.nxfers / 2;
	uint32_t was = bad.prog.xfers[xi].block;
	bad.prog.xfers[xi].block = 9;
	assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
	assert_non_null(strstr(rep.error, "of failed host 9"));
	bad.prog.xfers[xi].block = (uint16_t)was;
	/* the host in the region as well */
	bad.region = realloc(bad.region, (bad.nregion + 1) * sizeof(uint32_t));
	uint32_t k = 0;
	while (k < bad.nregion && bad.region[k] < 9)
		k++;
	memmove(bad.region + k + 1, bad.region + k, (bad.nregion - k) * sizeof(uint32_t));
	bad.region[k] = 9;
	bad.nregion++;
	assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
	assert_non_null(strstr(rep.error, "outside its region"));
	sched_patch_free(&bad);
	fx_close(&f);
}

/* The healthy schedule is what it was before the failures: a restore drops
 * the patch and has it bit for bit; no failure, no patch. */
static void test_restore(void **state)
{
	(void)state;
	struct fx f;
	struct sched_reduced again;
	struct bfb_stats st;
	struct ofc_error err = {0};
	struct bfb_opts o = {.threads = 2};

	fx_open(&f, "torus:8x8", "5-6,9-17", SCHED_ALLREDUCE);
	assert_int_equal(bfb_reduced(f.g, &f.G, SCHED_ALLREDUCE, &o, &again, &st, &err), 0);
	assert_int_equal(again.prog.nxfers, f.r.prog.nxfers);
	assert_memory_equal(again.prog.xfers, f.r.prog.xfers,
			    f.r.prog.nxfers * sizeof(struct xfer));
	sched_reduced_free(&again);
	/* no failure: an empty region, the healthy schedule itself */
	struct sched_patch empty;
	bool *none = calloc(f.g->m + 1, sizeof(bool));
	assert_int_equal(bfb_patch(f.g, &f.r, none, NULL, &o, 0, &empty, &st, &err), 0);
	assert_int_equal(empty.nregion, 0);
	assert_int_equal(empty.prog.nxfers, 0);
	struct verify_report rep;
	assert_int_equal(sched_verify_patched(&f.r, &empty, f.g, none, &rep), 0);
	sched_patch_free(&empty);
	free(none);
	fx_close(&f);
}

/* 1% of the ports of an a x b torus (4 a node), as bench/failures_lib.sh
 * picks them, as the arcs they take down: port p of host u transmits on
 * u's arc along generator p (+x -x +y -y) and receives on the arc along
 * it into u ("u>v,w>u,..."). */
static void ports_arcs(uint32_t a, uint32_t b, char *out, size_t size)
{
	uint32_t n = a * b, nused = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	uint8_t *used = calloc(n, 1);
	size_t len = 0;
	static const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};

	out[0] = 0;
	while (nused < 4 * n / 100) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		uint32_t u = (uint32_t)(x % n), p = (uint32_t)((x >> 32) % 4);
		if (used[u])
			continue;
		used[u] = 1;
		nused++;
		uint32_t i = u % a, k = u / a;
		uint32_t v = (i + a + dx[p]) % a + ((k + b + dy[p]) % b) * a;
		uint32_t w = (i + a - dx[p]) % a + ((k + b - dy[p]) % b) * a;
		len += (size_t)snprintf(out + len, size - len, "%s%u>%u,%u>%u", len ? "," : "", u,
					v, w, u);
	}
	free(used);
}

/* A whole node loads its links up to the step's largest U* over the
 * nodes solved whole (which the step costs anyway), not only to its own:
 * the room keeps its sources on their healthy links, so that on 1% of
 * torus:32x32's ports every one the degraded problem lets stay does
 * (about three in four with each node's own U*), at the same time. */
static void test_whole_nodes_keep_their_links(void **state)
{
	(void)state;
	char arcs[8192];
	struct fx f;

	ports_arcs(32, 32, arcs, sizeof(arcs));
	fx_open(&f, "torus:32x32", arcs, SCHED_ALLREDUCE);
	assert_true(f.st.whole > 0 && f.st.healthy_marked > 1000);
	assert_true(f.st.healthy_kept * 100 >= f.st.healthy_marked * 99);
	agrees(&f, 0.02);
	fx_close(&f);
}

/* Failures that put a node past the healthy diameter (torus:8x8 with 8
 * links down: 9 steps where it had 8) pad the base with the steps they
 * add, empty, in front of the reductions and behind the copies, and the
 * patch is planned on it: checked, at the explicit degraded BFB's time. */
static void test_lengthened(void **state)
{
	(void)state;
	const char *f8 = "0-1,27-35,7-0,56-0,12-13,42-50,63-62,20-28";
	enum sched_collective cs[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER, SCHED_ALLREDUCE};

	for (size_t i = 0; i < 3; i++) {
		struct fx f;
		uint32_t phases = cs[i] == SCHED_ALLREDUCE ? 2 : 1;

		fx_open(&f, "torus:8x8", f8, cs[i]);
		assert_int_equal(f.st.longer, 1);
		assert_int_equal(f.r.prog.nsteps, phases * 9);
		assert_int_equal(f.p.prog.nsteps, f.r.prog.nsteps);
		/* the added steps, the reductions' first and the copies' last:
		 * the base's empty, the patch's not */
		if (cs[i] != SCHED_ALLGATHER) {
			assert_int_equal(sched_step_size(&f.r.prog, 0), 0);
			assert_true(sched_step_size(&f.p.prog, 0) > 0);
		}
		if (cs[i] != SCHED_REDUCE_SCATTER) {
			uint32_t last = f.r.prog.nsteps - 1;

			assert_int_equal(sched_step_size(&f.r.prog, last), 0);
			assert_true(sched_step_size(&f.p.prog, last) > 0);
		}
		agrees(&f, 0.02);
		fx_close(&f);
	}
	/* one way of one more link: both phases solved, not mirrored */
	struct fx f;
	char more[80];
	snprintf(more, sizeof(more), "%s,9>10", f8);
	fx_open(&f, "torus:8x8", more, SCHED_ALLREDUCE);
	assert_int_equal(f.st.longer, 1);
	assert_false(f.st.mirrored);
	agrees(&f, 0.02);
	fx_close(&f);
}

/* Failures that cut a node off: refused, naming who cannot reach whom. */
static void test_disconnected(void **state)
{
	(void)state;
	struct graph *g;
	struct topo_tree *t;
	struct sched_group G;
	struct sched_reduced r;
	struct sched_patch p;
	struct bfb_stats st;
	struct ofc_error err = {0};
	struct bfb_opts o = {.threads = 1};

	assert_int_equal(topo_build_tree("torus:4x4", &g, &t, &err), 0);
	assert_int_equal(sched_group_of(g, t, &G, &err), 0);
	assert_int_equal(bfb_reduced(g, &G, SCHED_ALLGATHER, &o, &r, &st, &err), 0);
	bool *gone = calloc(g->m + 1, sizeof(bool));
	uint8_t *dead = calloc(g->n, 1);
	/* every link of node 5 */
	assert_int_equal(topo_mark_items(g, "5-4,5-6,5-1,5-9", gone, dead, &err), 0);
	assert_int_equal(bfb_patch(g, &r, gone, NULL, &o, 0, &p, &st, &err), -1);
	assert_non_null(strstr(err.msg, "can no longer reach node"));
	assert_non_null(strstr(err.msg, "5"));
	free(gone);
	free(dead);
	sched_reduced_free(&r);
	graph_free(g);
	topo_tree_free(t);
}

/* The nodes to solve whole, estimated before any is solved: past the
 * limit the patch is refused with that estimate (OFC_E_RUNTIME), nothing
 * held; under it, planned. */
static void test_whole_estimate(void **state)
{
	(void)state;
	struct fx f;
	struct ofc_error err = {0};
	struct bfb_opts o = {.threads = 2};
	struct bfb_stats st;
	struct sched_patch p;

	fx_open(&f, "torus:16x16", "5-6,40-41,100-101", SCHED_ALLREDUCE);
	/* 6 nodes whole in both phases (a link's two ends each lost an
	 * in-link of g and of g^T) x 255 blocks x 0.9 pieces, 48 bytes each
	 * at the answer's peak: about 129.1 KiB, refused under 100 KiB */
	assert_int_equal(bfb_patch(f.g, &f.r, f.gone, NULL, &o, 100 << 10, &p, &st, &err), -1);
	assert_int_equal(err.code, OFC_E_RUNTIME);
	assert_non_null(strstr(err.msg, "6 nodes lost a link: the answer with them solved whole "
					"needs about 129.1 KiB at its peak (2.75e+03 transfers)"));
	assert_null(p.region);
	ofc_error_clear(&err);
	assert_int_equal(bfb_patch(f.g, &f.r, f.gone, NULL, &o, 64 << 20, &p, &st, &err), 0);
	assert_int_equal(st.whole, 6);
	sched_patch_free(&p);
	fx_close(&f);
}

/* The check's read-only passes run on threads by chunks of transfers: a
 * copy sent in the step its sender receives the block, far past the first
 * chunks, is refused, and the reason names it. */
static void test_check_on_threads(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report rep;

	fx_open(&f, "torus:32x32", "5-6,40-41,300-301,600-601,900-901", SCHED_ALLREDUCE);
	const struct schedule *q = &f.p.prog;
	size_t late = SIZE_MAX;
	uint32_t lt = 0;
	assert_true(q->nxfers > 3 * 4096);
	/* the last copy whose sender got its block from the patch a step before */
	for (uint32_t t = q->nsteps / 2 + 1; t < q->nsteps; t++)
		for (size_t i = q->step_start[t]; i < q->step_start[t + 1]; i++)
			for (size_t j = q->step_start[t - 1]; j < q->step_start[t]; j++)
				if (q->xfers[j].dst == q->xfers[i].src &&
				    q->xfers[j].block == q->xfers[i].block &&
				    xfer_op(&q->xfers[i]) != XFER_REDUCE) {
					late = i;
					lt = t;
					break;
				}
	assert_true(late != SIZE_MAX && late > 2 * 4096);
	struct sched_patch bad = {0};
	corrupt(&f, late, 1, &bad);
	assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
	char want[96];
	snprintf(want, sizeof(want), "sends block %u before it holds it (time %u, held after ",
		 q->xfers[late].block, lt - q->nsteps / 2);
	if (!strstr(rep.error, want))
		fail_msg("%s (wanted ...%s)", rep.error, want);
	sched_patch_free(&bad);
	/* a node receiving a block a step later than the patch had it, where
	 * a node the patch leaves alone still takes it from that one on time:
	 * the late readers' check, on threads by (phase, owner) bucket of the
	 * pairs the patch plans, refuses it and says who */
	uint32_t said = 0, tried = 0;
	for (size_t i = q->nxfers; i-- > 0 && said < 3 && tried < 400;) {
		const struct xfer *x = &q->xfers[i];
		uint32_t t = 0;

		while (q->step_start[t + 1] <= i)
			t++;
		if (xfer_op(x) == XFER_REDUCE || t + 1 >= q->nsteps)
			continue;
		tried++;
		corrupt(&f, i, 4, &bad);
		if (sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep) < 0 &&
		    strstr(rep.error, "(unpatched) takes block"))
			said++;
		sched_patch_free(&bad);
	}
	if (said == 0)
		fail_msg("no late copy of %u tried was refused as read early", tried);
	fx_close(&f);
}

/* The check's two ways to find a pair the patch plans outside its region
 * (a bit's rank in an index, or a search where the index would not fit)
 * give the same verdict, reason and link loads on every corruption. */
static void test_index_and_search(void **state)
{
	(void)state;
	const char *fails[] = {"5-6,40-41,100-101", "21"};
	uint32_t refused = 0;

	for (size_t fi = 0; fi < 2; fi++) {
		struct fx f;

		fx_open(&f, "torus:16x16", fails[fi], SCHED_ALLREDUCE);
		const struct schedule *q = &f.p.prog;
		for (size_t xi = 0; xi <= q->nxfers; xi += q->nxfers / 17 + 1)
			for (int how = 0; how < 5; how++) {
				struct sched_patch bad = {0};
				struct verify_report a = {0}, b = {0};

				corrupt(&f, xi < q->nxfers ? xi : SIZE_MAX, how, &bad);
				bad.absent = f.p.absent;
				bad.nabsent = f.p.nabsent;
				int ra = sched_verify_patched(&f.r, &bad, f.g, f.gone, &a);
				bad.check_by_search = true;
				int rb = sched_verify_patched(&f.r, &bad, f.g, f.gone, &b);
				if (ra != rb || (ra < 0 && strcmp(a.error, b.error) != 0))
					fail_msg("transfer %zu (%d): index %d %s, search %d %s", xi,
						 how, ra, ra < 0 ? a.error : "", rb,
						 rb < 0 ? b.error : "");
				if (ra == 0)
					assert_true(a.sum_max_link_load == b.sum_max_link_load);
				refused += ra < 0;
				bad.absent = NULL;
				bad.nabsent = 0;
				sched_patch_free(&bad);
			}
		fx_close(&f);
	}
	assert_true(refused > 10);
}

/* The patch's search subtracts node ids on the whole word where G is a
 * power-of-two group: the same as G's own, every pair, and G's own where
 * it is not (mixed radices, Z_2^k). */
static void test_word_subtraction(void **state)
{
	(void)state;
	const char *specs[] = {"torus:8x4", "torus:4x16x2", "torus:64x2", "torus:6x4",
			       "hypercube:5"};
	const bool word[] = {true, true, true, false, false};

	for (size_t i = 0; i < 5; i++) {
		struct ofc_error err = {0};
		struct graph *g;
		struct topo_tree *t;
		struct sched_group G;

		if (topo_build_tree(specs[i], &g, &t, &err) < 0 ||
		    sched_group_of(g, t, &G, &err) < 0)
			fail_msg("%s: %s", specs[i], err.msg);
		uint32_t high = patch_high(&G);
		assert_int_equal(high != 0, word[i]);
		for (uint32_t a = 0; a < g->n; a++)
			for (uint32_t b = 0; b < g->n; b++)
				if (patch_sub(&G, high, a, b) != sched_group_sub(&G, a, b))
					fail_msg("%s: %u - %u: %u, the group's %u", specs[i], a, b,
						 patch_sub(&G, high, a, b),
						 sched_group_sub(&G, a, b));
		graph_free(g);
		topo_tree_free(t);
	}
}

/* The pieces of (phase, owner, block) in f's patch. */
static uint32_t pieces_of(const struct fx *f, const struct xfer *x)
{
	const struct schedule *q = &f->p.prog;
	uint32_t k = 0;

	for (size_t i = 0; i < q->nxfers; i++)
		k += xfer_op(&q->xfers[i]) == xfer_op(x) &&
		     xfer_owner(&q->xfers[i]) == xfer_owner(x) && q->xfers[i].block == x->block;
	return k;
}

/* f's patch with transfer xi's block, offset and length set. */
static void reshaped(const struct fx *f, size_t xi, uint32_t block, uint32_t off, uint32_t len,
		     struct sched_patch *out)
{
	corrupt(f, SIZE_MAX, 0, out); /* a copy */
	out->prog.xfers[xi].block = block;
	out->prog.xfers[xi].offset = off;
	out->prog.xfers[xi].length = len;
}

/* The check of the pieces outside the region, by (phase, owner) bucket
 * on threads (the patch gathered in ranges, each bucket sorted on its
 * own), finds a fault in any bucket and says the one it is: a piece
 * twice, a gap inside or at the end, a node's own block; and the causal
 * check by bucket a reduction a step late. */
static void test_bucket_faults(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report rep;
	struct sched_patch bad = {0};
	char want[160];

	fx_open(&f, "torus:32x32", "5-6,40-41,300-301,600-601,900-901", SCHED_ALLREDUCE);
	const struct schedule *q = &f.p.prog;
	assert_int_equal(f.p.nregion, 0);
	assert_true(q->nxfers > 2 * 8192); /* gathered in two ranges on two cores */
	for (size_t k = 0; k <= 6; k++) {
		size_t xi = k < 6 ? q->nxfers / 6 * k : q->nxfers - 1;
		const struct xfer *x = &q->xfers[xi];

		corrupt(&f, xi, 2, &bad);
		assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
		snprintf(want, sizeof(want), "node %u: block %u received twice at %u / %u",
			 xfer_owner(x), x->block, x->offset, SCHED_ONE);
		if (!strstr(rep.error, want))
			fail_msg("transfer %zu twice: %s (wanted %s)", xi, rep.error, want);
		sched_patch_free(&bad);
	}
	/* whole blocks alone in their pair, far into the patch, cut short,
	 * moved up or made the owner's own */
	uint32_t said = 0;
	for (size_t xi = q->nxfers - 1; xi > q->nxfers / 2 && said < 3; xi--) {
		const struct xfer *x = &q->xfers[xi];
		uint32_t u = xfer_owner(x);

		if (x->offset || x->length != SCHED_ONE || pieces_of(&f, x) != 1)
			continue;
		reshaped(&f, xi, x->block, 0, SCHED_ONE - 1, &bad);
		assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
		snprintf(want, sizeof(want), "node %u: block %u has a gap at the end", u, x->block);
		if (!strstr(rep.error, want))
			fail_msg("%s (wanted %s)", rep.error, want);
		sched_patch_free(&bad);
		reshaped(&f, xi, x->block, 1, SCHED_ONE - 1, &bad);
		assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
		snprintf(want, sizeof(want), "node %u: block %u has a gap at 1 / %u", u, x->block,
			 SCHED_ONE);
		if (!strstr(rep.error, want))
			fail_msg("%s (wanted %s)", rep.error, want);
		sched_patch_free(&bad);
		reshaped(&f, xi, u, 0, SCHED_ONE, &bad);
		assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
		snprintf(want, sizeof(want), "node %u receives its own block", u);
		if (!strstr(rep.error, want))
			fail_msg("%s (wanted %s)", rep.error, want);
		sched_patch_free(&bad);
		said++;
	}
	assert_int_equal(said, 3);
	/* a reduction a step later: its receiver may not have sent its own
	 * yet (the time runs backwards there); some are refused, saying so */
	said = 0;
	uint32_t tried = 0;
	for (size_t i = q->step_start[q->nsteps / 2]; i-- > 0 && said < 2 && tried < 300;) {
		uint32_t t = 0;

		while (q->step_start[t + 1] <= i)
			t++;
		if (t + 1 >= q->nsteps / 2)
			continue;
		tried++;
		corrupt(&f, i, 4, &bad);
		snprintf(want, sizeof(want), "reduces block %u before the receiver sends its own",
			 q->xfers[i].block);
		if (sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep) < 0 &&
		    strstr(rep.error, want))
			said++;
		sched_patch_free(&bad);
	}
	if (said == 0)
		fail_msg("no reduction of %u moved a step later was refused as early", tried);
	fx_close(&f);
}

/* A region node whose whole program the patch writes out (the base's
 * own pieces for it) passes with the link loads and transfers of the
 * patch without it: a region's pieces go through the causal and load
 * checks' buckets too, the base left off its arcs there. */
static void test_region_program(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report a, b;
	struct sched_patch w = {0};

	fx_open(&f, "torus:8x8", "5-6", SCHED_ALLREDUCE);
	const struct schedule *q = &f.p.prog, *base = &f.r.prog;
	uint32_t u = 36, e = 0;
	while (owned(&f, u))
		u++;
	for (struct xfer y = base->xfers[0]; xfer_owner(&y) != u; e++)
		y = sched_reduced_move(&f.r, &base->xfers[0],
				       sched_group_element(&f.r.group, e + 1));
	assert_int_equal(sched_verify_patched(&f.r, &f.p, f.g, f.gone, &a), 0);
	w.nregion = 1;
	w.region = malloc(sizeof(uint32_t));
	w.region[0] = u;
	sched_init(&w.prog, q->collective, q->algorithm, q->nodes);
	for (uint32_t t = 0; t < base->nsteps; t++) {
		sched_step(&w.prog);
		for (size_t i = t < q->nsteps ? q->step_start[t] : 0;
		     t < q->nsteps && i < q->step_start[t + 1]; i++)
			sched_add(&w.prog, &q->xfers[i]);
		for (size_t i = base->step_start[t]; i < base->step_start[t + 1]; i++) {
			struct xfer y = sched_reduced_move(&f.r, &base->xfers[i],
							   sched_group_element(&f.r.group, e));

			assert_int_equal(xfer_owner(&y), u);
			sched_add(&w.prog, &y);
		}
	}
	if (sched_verify_patched(&f.r, &w, f.g, f.gone, &b) < 0)
		fail_msg("node %u's program as a region: %s", u, b.error);
	assert_true(a.sum_max_link_load == b.sum_max_link_load);
	assert_true(a.max_link_load == b.max_link_load);
	assert_int_equal(a.ntransfers, b.ntransfers);
	sched_patch_free(&w);
	fx_close(&f);
}

/* Each patch transfer's own checks run by chunks on every core: a
 * transfer far into the patch out of range, in the other phase, over a
 * port that leads elsewhere or over the failed arc is refused, and where
 * two are bad the earlier one is named, whichever chunk finds it. */
static void test_transfer_faults(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report rep;
	struct sched_patch bad = {0};
	char want[160];

	fx_open(&f, "torus:32x32", "5-6,40-41,300-301,600-601,900-901", SCHED_ALLREDUCE);
	const struct schedule *q = &f.p.prog;
	size_t late = q->nxfers - 3, later = q->nxfers - 1;
	assert_true(late > 3 * 4096);
	for (int how = 0; how < 4; how++) {
		corrupt(&f, SIZE_MAX, 0, &bad);
		struct xfer *x = &bad.prog.xfers[late];
		if (how == 0) {
			x->length = 0;
			snprintf(want, sizeof(want), "patch transfer %zu is out of range", late);
		} else if (how == 1) {
			x->flags ^= 4; /* a copy made a reduction, or back */
			snprintf(want, sizeof(want),
				 "patch transfer %zu is in the other phase's steps", late);
		} else if (how == 2) {
			x->dst = (uint16_t)((x->dst + 2) % f.g->n);
			snprintf(want, sizeof(want),
				 "patch transfer %zu: %u's port %u does not lead to %u", late,
				 x->src, x->lane, x->dst);
		} else {
			uint32_t j = 0;

			while (graph_out(f.g, 5)[j] != 6)
				j++;
			x->src = 5;
			x->dst = 6;
			x->lane = (uint16_t)j;
			snprintf(want, sizeof(want),
				 "patch transfer %zu: the arc 5 -> 6 has failed", late);
		}
		bad.prog.xfers[later].length = 0; /* the later one is not said */
		assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
		if (!strstr(rep.error, want))
			fail_msg("%s (wanted %s)", rep.error, want);
		sched_patch_free(&bad);
	}
	fx_close(&f);
}

/* The transfers' own check runs in the same pass, by chunks on every
 * core, as the count of their pieces by bucket: a fault in each of
 * several chunks, the first in the patch's order is said, whichever
 * chunk a thread finished first; the count never runs on past it (a
 * transfer out of range has no bucket). */
static void test_xfers_with_count(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report rep;
	char want[96];

	fx_open(&f, "torus:32x32", "5-6,40-41,300-301,600-601,900-901", SCHED_ALLREDUCE);
	const struct schedule *q = &f.p.prog;
	assert_true(q->nxfers > 2 * 8192); /* two workers or more: 8 chunks */
	size_t at[] = {0, q->nxfers / 9, q->nxfers / 2 + 1, q->nxfers - 1};
	for (size_t k = 0; k < 4; k++) {
		struct sched_patch bad = {0};

		corrupt(&f, SIZE_MAX, 0, &bad);
		/* this one and every later one of at[] out of range, the
		 * later ones with a node past the last (no bucket) */
		bad.prog.xfers[at[k]].length = 0;
		for (size_t l = k + 1; l < 4; l++)
			bad.prog.xfers[at[l]].src = (uint16_t)(f.g->n + 7);
		assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
		snprintf(want, sizeof(want), "patch transfer %zu is out of range", at[k]);
		if (!strstr(rep.error, want))
			fail_msg("%s (wanted %s)", rep.error, want);
		sched_patch_free(&bad);
	}
	fx_close(&f);
}

/* The index of the pairs has a row of whole words per bucket; where the
 * nodes are not a multiple of 64 a row's last word is part padding, and
 * the group's sums take its loop (radices not powers of two): the index
 * and the search still give the same verdict, reason, transfers and link
 * loads. */
static void test_index_shared_words(void **state)
{
	(void)state;
	uint32_t refused = 0;
	struct fx f;

	fx_open(&f, "torus:12x10", "5-6,40-41,100-101,17", SCHED_ALLREDUCE);
	assert_true(f.g->n % 64 != 0);
	const struct schedule *q = &f.p.prog;
	for (size_t xi = 0; xi <= q->nxfers; xi += q->nxfers / 29 + 1)
		for (int how = 0; how < 5; how++) {
			struct sched_patch bad = {0};
			struct verify_report a = {0}, b = {0};

			corrupt(&f, xi < q->nxfers ? xi : SIZE_MAX, how, &bad);
			bad.absent = f.p.absent;
			bad.nabsent = f.p.nabsent;
			int ra = sched_verify_patched(&f.r, &bad, f.g, f.gone, &a);
			bad.check_by_search = true;
			int rb = sched_verify_patched(&f.r, &bad, f.g, f.gone, &b);
			if (ra != rb || (ra < 0 && strcmp(a.error, b.error) != 0))
				fail_msg("transfer %zu (%d): index %d %s, search %d %s", xi, how,
					 ra, ra < 0 ? a.error : "", rb, rb < 0 ? b.error : "");
			if (ra == 0) {
				assert_true(a.sum_max_link_load == b.sum_max_link_load);
				assert_int_equal(a.ntransfers, b.ntransfers);
			}
			refused += ra < 0;
			bad.absent = NULL;
			bad.nabsent = 0;
			sched_patch_free(&bad);
		}
	assert_true(refused > 10);
	agrees(&f, -1);
	fx_close(&f);
}

/* Outside the nodes solved whole in a phase (those that lost an in-link
 * of its H), a block is planned again only where it must move:
 * its distance to its owner u grew (another step), or one of its healthy
 * pieces came over a failed arc or from an in-neighbour now farther from
 * it (no longer a candidate: distances only grow). A block whose distance
 * to some other in-neighbour grew keeps its pieces; fails when the patch
 * plans every block a raised in-neighbour touches. */
static void test_blocks_planned_where_they_must(void **state)
{
	(void)state;
	struct fx f;
	struct ofc_error err = {0};

	fx_open(&f, "torus:16x16", "5-6,40>41,100-101,7>8,200-216", SCHED_ALLREDUCE);
	uint32_t n = f.g->n, kept_beside = 0, *tails = graph_arc_tails(f.g);
	uint16_t *dh = topo_distances(f.g, 2, &err), *dd = topo_distances(f.gd, 2, &err);
	uint8_t *whole = calloc(n, 1); /* bit 1: the copies' H, 2: the reductions' */
	const struct schedule *q = &f.p.prog, *b = &f.r.prog;

	assert_non_null(dh);
	assert_non_null(dd);
	for (uint32_t a = 0; a < f.g->m; a++)
		if (f.gone[a]) {
			whole[f.g->adj[a]] |= 1;
			whole[tails[a]] |= 2;
		}
		/* H-distance from w to x: g's for the copies, g^T's for reductions */
#define HD(dist, red, w, x) ((red) ? (dist)[(size_t)(x)*n + (w)] : (dist)[(size_t)(w)*n + (x)])
	for (size_t i = 0; i < q->nxfers; i++) {
		const struct xfer *x = &q->xfers[i];
		uint32_t u = xfer_owner(x), w = x->block;
		bool red = xfer_op(x) == XFER_REDUCE, must = HD(dd, red, w, u) != HD(dh, red, w, u);

		if (whole[u] & (red ? 2 : 1))
			continue;
		for (size_t k = 0; k < b->nxfers && !must; k++) {
			struct xfer z =
			    sched_reduced_move(&f.r, &b->xfers[k], sched_group_element(&f.G, u));
			uint32_t peer = red ? z.dst : z.src;

			if (z.block != w || (xfer_op(&z) == XFER_REDUCE) != red)
				continue;
			must = f.gone[f.g->off[z.src] + z.lane] ||
			       HD(dd, red, w, peer) != HD(dh, red, w, peer);
		}
		if (!must)
			fail_msg("node %u plans block %u (%s) again, which needs no move", u, w,
				 red ? "reduce" : "copy");
	}
	/* and some block beside a raised in-neighbour is kept */
	for (uint32_t u = 0; u < n; u++)
		for (uint32_t w = 0; w < n && !(whole[u] & 2); w++)
			for (uint32_t a = f.g->off[u]; a < f.g->off[u + 1]; a++) {
				uint32_t v = f.g->adj[a]; /* an in-neighbour of u in g^T */

				kept_beside += w != u && w != v &&
					       dd[(size_t)u * n + w] == dh[(size_t)u * n + w] &&
					       dd[(size_t)v * n + w] != dh[(size_t)v * n + w];
			}
#undef HD
	assert_true(kept_beside > 0);
	assert_int_equal(sched_verify_patched(&f.r, &f.p, f.g, f.gone, &(struct verify_report){0}),
			 0);
	free(whole);
	free(tails);
	free(dh);
	free(dd);
	fx_close(&f);
}

/* A block the patch plans in parts for a node outside its region (its
 * pieces kept apart from the whole ones in the check): a part moved
 * along leaves a gap, one moved back arrives twice, each said at its
 * offset; the patch as made passes. */
static void test_part_pieces(void **state)
{
	(void)state;
	struct fx f;
	struct verify_report rep;
	char want[128];

	fx_open(&f, "torus:32x32", "5-6,40-41,300-301,600-601,900-901", SCHED_ALLREDUCE);
	const struct schedule *q = &f.p.prog;
	size_t part = SIZE_MAX, parts = 0;
	uint8_t *inr = calloc(f.g->n, 1);
	for (uint32_t i = 0; i < f.p.nregion; i++)
		inr[f.p.region[i]] = 1;
	for (size_t i = 0; i < q->nxfers; i++)
		if (!inr[xfer_owner(&q->xfers[i])] && q->xfers[i].offset > 0) {
			parts++;
			part = part == SIZE_MAX && i > q->nxfers / 2 ? i : part;
		}
	free(inr);
	assert_true(parts > 100 && part != SIZE_MAX);
	assert_int_equal(sched_verify_patched(&f.r, &f.p, f.g, f.gone, &rep), 0);
	for (int how = 0; how < 2; how++) {
		struct sched_patch bad = {0};
		const struct xfer *x = &q->xfers[part];

		corrupt(&f, SIZE_MAX, 0, &bad);
		if (how == 0) {
			bad.prog.xfers[part].offset++;
			bad.prog.xfers[part].length--;
			snprintf(want, sizeof(want), "node %u: block %u has a gap at %u / %u",
				 xfer_owner(x), x->block, x->offset + 1, SCHED_ONE);
		} else {
			bad.prog.xfers[part].offset--;
			bad.prog.xfers[part].length++;
			snprintf(want, sizeof(want), "node %u: block %u received twice at %u / %u",
				 xfer_owner(x), x->block, x->offset - 1, SCHED_ONE);
		}
		assert_int_equal(sched_verify_patched(&f.r, &bad, f.g, f.gone, &rep), -1);
		if (!strstr(rep.error, want))
			fail_msg("%s (wanted %s)", rep.error, want);
		sched_patch_free(&bad);
	}
	fx_close(&f);
}

/* The check's group sums (pc_sub, pc_add: one subtraction over all the
 * fields where the radices are powers of two) are sched_group_sub's and
 * sched_group_add's on every pair of ids, the fast form taken where it
 * applies; other radices take the group's own. */
static void test_check_group_sums(void **state)
{
	static const uint32_t radix[][4] = {{64, 32}, {2, 2, 2, 2}, {4, 1, 8},
					    {16},     {6, 4},	    {3, 5, 2}};
	static const uint32_t dims[] = {2, 4, 3, 1, 2, 3};

	(void)state;
	for (size_t k = 0; k < sizeof(dims) / sizeof(dims[0]); k++) {
		struct sched_reduced r = {0};
		struct pcheck c = {.r = &r};

		sched_group_make(&r.group, radix[k], dims[k]);
		pcheck_group_fields(&c);
		assert_int_equal(c.ghi != 0, r.group.pow2);
		for (uint32_t a = 0; a < r.group.nodes; a++)
			for (uint32_t b = 0; b < r.group.nodes; b++) {
				assert_int_equal(pc_sub(&c, a, b), sched_group_sub(&r.group, a, b));
				assert_int_equal(pc_add(&c, a, b), sched_group_add(&r.group, a, b));
			}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_one_link),
	    cmocka_unit_test(test_check_group_sums),
	    cmocka_unit_test(test_one_port_and_3d),
	    cmocka_unit_test(test_one_percent),
	    cmocka_unit_test(test_whole_nodes_as_explicit),
	    cmocka_unit_test(test_corrupted_patch),
	    cmocka_unit_test(test_restore),
	    cmocka_unit_test(test_disconnected),
	    cmocka_unit_test(test_whole_estimate),
	    cmocka_unit_test(test_mirrored_allreduce),
	    cmocka_unit_test(test_lengthened),
	    cmocka_unit_test(test_whole_nodes_keep_their_links),
	    cmocka_unit_test(test_failed_host),
	    cmocka_unit_test(test_failed_host_corrupted),
	    cmocka_unit_test(test_check_on_threads),
	    cmocka_unit_test(test_index_and_search),
	    cmocka_unit_test(test_bucket_faults),
	    cmocka_unit_test(test_region_program),
	    cmocka_unit_test(test_transfer_faults),
	    cmocka_unit_test(test_word_subtraction),
	    cmocka_unit_test(test_xfers_with_count),
	    cmocka_unit_test(test_index_shared_words),
	    cmocka_unit_test(test_part_pieces),
	    cmocka_unit_test(test_blocks_planned_where_they_must),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
