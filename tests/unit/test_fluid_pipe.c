/* Theorem 4's schedule by its period (fluid_pipeline, fluid_pipe_verify,
 * fluid_pipe_expand): the expansion is fluid_schedule's, transfer for
 * transfer; the check from the period gives the explicit verifier's
 * verdict and figures on the expansion (steps, transfers, utilisation,
 * cost, duplicates) for broadcasts, allgathers, all-to-alls and
 * reduce-scatters at several K; and a period with a wrong transfer, a
 * missing delivery or a capacity overrun only the overlap of consecutive
 * chunks shows fails both checks; and ofc schedule's collectives are
 * answered from their period, their -o the same transfers and files, the
 * allreduce from its two phases' (a shard sent before it is reduced
 * caught); a mirrored routing's pattern is checked at one root and its
 * images compared, a root that is no image checked itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "controller/config/config.h"
#include "controller/export/export.h"
#include "controller/fabric/fabric.h"
#include "controller/schedule/schedule.h"
#include "fluid/fluid.h"
#include "fluid/internal.h"
#include "fluid/pipe_internal.h"

static void near(double got, double want, double rel, const char *what)
{
	if (fabs(got - want) > rel * fabs(want) + 1e-9)
		fail_msg("%s: %.12g, want %.12g", what, got, want);
}

static void solve_with(const struct fluid_net *n, enum fluid_collective c, uint32_t hops,
		       const struct fluid_group *g, struct fluid_result *r)
{
	struct fluid_opts o = {.collective = c,
			       .method = g ? FLUID_MIRRORED : FLUID_DW,
			       .group = g,
			       .hops = hops,
			       .slack = 2e-5,
			       .time_limit = 300};
	struct ofc_error err = {0};

	if (fluid_solve(n, &o, r, &err) != 0)
		fail_msg("fluid_solve: %s", err.msg);
	fluid_routing_merge(&r->routing);
}

static void solve(const struct fluid_net *n, enum fluid_collective c, uint32_t hops,
		  struct fluid_result *r)
{
	solve_with(n, c, hops, NULL, r);
}

/* Theorem 4's schedule as it was first written, piece by piece, chunk by
 * chunk, hop by hop, each transfer to its step's next place: what
 * fluid_pipe_fill_step must give a step at a time. */
static void reference_expand(const struct fluid_net *n, const struct fluid_pipe *p,
			     struct schedule *s)
{
	const struct fluid_routing *rt = &p->r->routing;
	uint32_t K = p->chunks, S = p->steps, lo, hi;
	uint32_t *port = calloc(n->narcs + 1, 4), *deg = calloc(n->nverts + 1, 4);
	size_t *pos = calloc(S + 1, sizeof(size_t));
	struct xfer *out;

	sched_init(s, SCHED_ALLGATHER, "ref", n->nverts);
	out = sched_append_steps(s, S, p->count);
	for (uint32_t e = 0; e < n->narcs; e++)
		port[e] = deg[n->tail[e]]++;
	for (uint32_t t = 1; t < S; t++)
		pos[t] = pos[t - 1] + p->count[t - 1];
	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		uint32_t block = p->r->collective == FLUID_ALLTOALL
				     ? q->origin * n->nverts + q->target
				     : q->origin;

		for (uint32_t k = 0; k < K; k++) {
			if (!fluid_chunk_of(q, k, K, &lo, &hi))
				continue;
			for (uint32_t h = 0; h < q->nhops; h++) {
				uint32_t e = rt->hop_arc[q->first + h];
				uint32_t st = rt->hop_layer[q->first + h] + k;
				bool red = p->rev && (n->kind[n->head[e]] & FLUID_CAN_REDUCE);

				if (p->rev)
					st = S - 1 - st;
				out[pos[st]++] = (struct xfer){
				    .src = (uint16_t)n->tail[e],
				    .dst = (uint16_t)n->head[e],
				    .block = block,
				    .offset = lo,
				    .length = hi - lo,
				    .lane = (uint16_t)(port[e] < SCHED_NO_LANE ? port[e]
									       : SCHED_NO_LANE),
				    .flags = xfer_flags(DIR_NONE, red ? XFER_REDUCE : XFER_COPY),
				};
			}
		}
	}
	free(pos);
	free(port);
	free(deg);
}

static void pipe_step(const void *ctx, uint32_t t, struct xfer *out)
{
	fluid_pipe_fill_step(ctx, t, out);
}

/* What f writes of a schedule, as bytes (the caller frees them). */
static char *written(void (*f)(FILE *, const void *), const void *x, size_t *len)
{
	char *data = NULL;
	FILE *mem = open_memstream(&data, len);

	f(mem, x);
	fclose(mem);
	return data;
}

static void json_of(FILE *out, const void *x)
{
	struct json_writer w;

	jw_init(&w, out, true);
	jw_obj_begin(&w);
	sched_write_json_members(&w, x, true);
	jw_obj_end(&w);
	jw_finish(&w);
}

static void json_streamed(FILE *out, const void *x)
{
	struct json_writer w;

	jw_init(&w, out, true);
	jw_obj_begin(&w);
	sched_stream_write_json_members(&w, x);
	jw_obj_end(&w);
	jw_finish(&w);
}

static void text_of(FILE *out, const void *x)
{
	sched_write_text(out, x, UINT32_MAX);
}

static void text_streamed(FILE *out, const void *x)
{
	sched_stream_write_text(out, x, UINT32_MAX);
}

static void pb_of(FILE *out, const void *x)
{
	struct ofc_error err = {0};

	assert_int_equal(schedule_write_pb(x, out, &err), 0);
}

static void pb_streamed(FILE *out, const void *x)
{
	struct ofc_error err = {0};

	assert_int_equal(schedule_stream_write_pb(x, out, &err), 0);
}

/* The stream's files (JSON, text, protobuf; and a text of few lines) are
 * the explicit schedule's, byte for byte, and so is its expansion. */
static void same_files(const struct sched_stream *st, const struct schedule *s)
{
	static const struct {
		void (*whole)(FILE *, const void *);
		void (*made)(FILE *, const void *);
	} ways[] = {{json_of, json_streamed}, {text_of, text_streamed}, {pb_of, pb_streamed}};
	struct ofc_error err = {0};
	struct schedule e;

	for (size_t i = 0; i < sizeof(ways) / sizeof(ways[0]); i++) {
		size_t n1, n2;
		char *a = written(ways[i].whole, s, &n1), *b = written(ways[i].made, st, &n2);

		assert_true(n1 > 0);
		assert_int_equal(n1, n2);
		assert_memory_equal(a, b, n1);
		free(a);
		free(b);
	}
	for (uint32_t lines = 1; lines < 40; lines += 7) {
		char *a = NULL, *b = NULL;
		size_t n1, n2;
		FILE *f1 = open_memstream(&a, &n1), *f2 = open_memstream(&b, &n2);

		sched_write_text(f1, s, lines);
		sched_stream_write_text(f2, st, lines);
		fclose(f1);
		fclose(f2);
		assert_int_equal(n1, n2);
		assert_memory_equal(a, b, n1);
		free(a);
		free(b);
	}
	assert_int_equal(sched_stream_expand(st, &e, &err), 0);
	assert_int_equal(e.nsteps, s->nsteps);
	assert_int_equal(e.nxfers, s->nxfers);
	assert_memory_equal(e.xfers, s->xfers, s->nxfers * sizeof(struct xfer));
	assert_memory_equal(e.step_start, s->step_start, (s->nsteps + 1) * sizeof(uint32_t));
	assert_int_equal(e.nmetrics, s->nmetrics);
	assert_true(e.root == s->root && e.collective == s->collective);
	sched_free(&e);
}

/* Two reports the same to the last bit: what a check on more threads
 * must give. */
static void same_report(const struct verify_report *a, const struct verify_report *b,
			const char *what)
{
	if (a->ok != b->ok || strcmp(a->error, b->error) != 0 || a->bad_step != b->bad_step ||
	    a->bad_xfer != b->bad_xfer || a->nsteps != b->nsteps ||
	    a->ntransfers != b->ntransfers || a->max_utilisation != b->max_utilisation ||
	    a->network_cost != b->network_cost || a->duplicate_blocks != b->duplicate_blocks ||
	    a->sum_max_link_load != b->sum_max_link_load || a->max_link_load != b->max_link_load ||
	    a->max_total_link_load != b->max_total_link_load ||
	    a->max_wavelengths_used != b->max_wavelengths_used || a->split != b->split ||
	    a->pieces_by_sums != b->pieces_by_sums)
		fail_msg("%s: '%s' step %u, utilisation %.17g, cost %.17g, duplicates %.17g; "
			 "want '%s' step %u, %.17g, %.17g, %.17g",
			 what, a->error, a->bad_step, a->max_utilisation, a->network_cost,
			 a->duplicate_blocks, b->error, b->bad_step, b->max_utilisation,
			 b->network_cost, b->duplicate_blocks);
}

/* The period's check of p on 1 thread into rep, and on 2, 3 and 4 the
 * same report: its parts (the cost, the loads by steps, the pattern by
 * roots) joined in the one order whatever thread ran them; and the same
 * with the loads hop by hop as by classes of pieces, and the cost term by
 * term as in whole units. */
static int period_verify(struct fluid_pipe *p, const struct verify_network *vn,
			 struct verify_report *rep)
{
	struct verify_report r;
	unsigned keep = p->threads;
	int rc;

	p->threads = 1;
	rc = fluid_pipe_verify(p, vn, rep);
	for (unsigned t = 2; t <= 4; t++) {
		p->threads = t;
		assert_int_equal(fluid_pipe_verify(p, vn, &r), rc);
		same_report(&r, rep, "the period on more threads");
	}
	p->threads = 1;
	p->loads_by_hop = true;
	assert_int_equal(fluid_pipe_verify(p, vn, &r), rc);
	same_report(&r, rep, "the period's loads hop by hop");
	p->loads_by_hop = false;
	p->cost_in_order = true;
	assert_int_equal(fluid_pipe_verify(p, vn, &r), rc);
	same_report(&r, rep, "the period's cost term by term");
	p->cost_in_order = false;
	p->threads = keep;
	return rc;
}

/* Both checks with K chunks, step time scaled by `squeeze` (1: Theorem 4's
 * own): the verdicts agree, and the figures when both pass; the period's
 * verdict. */
static int both(const struct fluid_net *n, const struct fluid_result *r, uint32_t K, double squeeze,
		struct verify_report *pv, struct verify_report *ev)
{
	struct fluid_steps_opts so = {.chunks = K};
	struct fluid_steps_report rep, rep2;
	struct fluid_pipe p;
	struct schedule s, s2;
	struct verify_network vn;
	struct ofc_error err = {0};

	if (fluid_pipeline(n, r, &so, &p, &rep, &err) < 0 ||
	    fluid_pipe_expand(&p, &so, &rep, &s, &err) < 0)
		fail_msg("pipeline: %s", err.msg);
	/* its cost term by term: the same bits */
	struct fluid_steps_opts so1 = {.chunks = K, .cost_in_order = true};
	struct fluid_pipe p1;

	if (fluid_pipeline(n, r, &so1, &p1, &rep2, &err) < 0)
		fail_msg("pipeline: %s", err.msg);
	if (rep2.cost != rep.cost)
		fail_msg("K %u: cost %.17g, term by term %.17g", K, rep.cost, rep2.cost);
	fluid_pipe_free(&p1);
	fluid_verify_network(n, rep.step_time * squeeze, &vn);
	struct verify_opts vo = {.network = &vn};
	int pr = period_verify(&p, &vn, pv), er = sched_verify(&s, &vo, ev);

	if (pr != er)
		fail_msg("K %u: the period says %s (%s), the expansion %s (%s)", K,
			 pr ? "bad" : "good", pv->error, er ? "bad" : "good", ev->error);
	assert_int_equal(pv->ok, ev->ok);
	assert_int_equal(pv->nsteps, s.nsteps);
	assert_int_equal(pv->ntransfers, s.nxfers);
	if (pr == 0) {
		/* to the last bit: the answers print them */
		if (pv->max_utilisation != ev->max_utilisation ||
		    pv->network_cost != ev->network_cost)
			fail_msg("K %u: utilisation %.17g, cost %.17g; want %.17g, %.17g", K,
				 pv->max_utilisation, pv->network_cost, ev->max_utilisation,
				 ev->network_cost);
		near(pv->duplicate_blocks, ev->duplicate_blocks, 1e-6, "duplicates");
	} else if (!p.rev && strstr(pv->error, "(step time x bandwidth)")) {
		/* the first overload in the verifier's order (a reduction's
		 * window check reports its own: the forward steps') */
		assert_string_equal(pv->error, ev->error);
		assert_int_equal(pv->bad_step, ev->bad_step);
	}
	/* The expansion is fluid_schedule's and the first layout's, byte for
	 * byte, and written a step at a time it is the same files. */
	if (fluid_schedule(n, r, &so, &s2, &rep2, &err) < 0)
		fail_msg("fluid_schedule: %s", err.msg);
	assert_int_equal(s2.nsteps, s.nsteps);
	assert_int_equal(s2.nxfers, s.nxfers);
	assert_memory_equal(s2.xfers, s.xfers, s.nxfers * sizeof(struct xfer));
	assert_memory_equal(s2.step_start, s.step_start, (s.nsteps + 1) * sizeof(uint32_t));
	assert_true(rep2.cost == rep.cost);
	sched_free(&s2);
	reference_expand(n, &p, &s2);
	assert_int_equal(s2.nxfers, s.nxfers);
	assert_memory_equal(s2.xfers, s.xfers, s.nxfers * sizeof(struct xfer));
	assert_memory_equal(s2.step_start, s.step_start, (s.nsteps + 1) * sizeof(uint32_t));
	sched_free(&s2);
	fluid_pipe_head(&p, &so, &rep, &s2);
	struct sched_stream st = {
	    .head = &s2, .nsteps = p.steps, .count = p.count, .fill = pipe_step, .ctx = &p};

	same_files(&st, &s);
	sched_free(&s2);
	sched_free(&s);
	fluid_pipe_free(&p);
	return pr;
}

static void agree(const struct fluid_net *n, const struct fluid_result *r)
{
	static const uint32_t ks[] = {1, 2, 5, 16};
	struct verify_report pv, ev;

	for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
		if (both(n, r, ks[i], 1, &pv, &ev) != 0)
			fail_msg("K %u: %s", ks[i], pv.error);
		assert_true(pv.max_utilisation <= 1 + 1e-6);
	}
}

/* A mirrored routing's images of a piece share one order (the expansion,
 * which `both` compares with reference_expand's, is the same): fewer
 * orders laid out than pieces, and each piece's its layers' sort. */
static void shared_orders(const struct fluid_net *n, const struct fluid_result *r)
{
	struct fluid_steps_opts so = {.chunks = 2};
	struct fluid_steps_report rep;
	struct fluid_pipe p;
	struct ofc_error err = {0};
	const struct fluid_routing *rt = &r->routing;
	size_t distinct = 0;

	if (fluid_pipeline(n, r, &so, &p, &rep, &err) < 0)
		fail_msg("pipeline: %s", err.msg);
	for (size_t i = 0; i < rt->npieces; i++) {
		const struct fluid_piece *q = &rt->pieces[i];
		const uint32_t *o = pipe_order(&p, q);

		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = p.order_at[k] == p.order_at[i];
		distinct += !seen;
		for (uint32_t j = 1; j < q->nhops; j++) {
			uint32_t a = rt->hop_layer[q->first + o[j - 1]],
				 b = rt->hop_layer[q->first + o[j]];

			assert_true(a > b || (a == b && o[j - 1] < o[j]));
		}
	}
	if (distinct * 4 > rt->npieces)
		fail_msg("%zu orders for %zu pieces", distinct, rt->npieces);
	fluid_pipe_free(&p);
}

/* The same with other costs: some whole units apart (0.25, 3: the cost
 * in units), some not (0.1, 1/3: term by term), each to the expansion's
 * last bit. */
static void agree_costs(struct fluid_net *n, const struct fluid_result *r)
{
	static const double dyadic[] = {0.25, 3, 1.5}, other[] = {0.1, 1.0 / 3, 7};
	double *keep = xmalloc(n->narcs * sizeof(double));
	uint64_t *u = xmalloc(n->narcs * sizeof(uint64_t));
	int x;

	memcpy(keep, n->cost, n->narcs * sizeof(double));
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t a = 0; a < n->narcs; a++)
			n->cost[a] = keep[a] == 0 ? 0 : (pass ? other : dyadic)[a % 3];
		assert_int_equal(pipe_cost_units(n->cost, n->narcs, u, &x), pass == 0);
		agree(n, r);
	}
	memcpy(n->cost, keep, n->narcs * sizeof(double));
	assert_true(pipe_cost_units(n->cost, n->narcs, u, &x));
	free(keep);
	free(u);
}

/* The cost's sum in whole units: the units of each cost (m 2^e, m under
 * 2^21), and the sum only where no add of the serial sum would round: at
 * 2^53 units it would (2^53 + 1 is no double), and a start of no whole
 * units rounds too. */
static void test_cost_units(void **state)
{
	static const double dy[] = {0, 3, 0.25, 1.5}, nd[] = {1, 0.1}, wide[] = {2097153};
	uint64_t u[4];
	unsigned __int128 t = 0;
	double s = -1, big = 0x1p53;
	int x;

	(void)state;
	assert_true(pipe_cost_units(dy, 4, u, &x));
	assert_int_equal(x, -2);
	assert_true(u[0] == 0 && u[1] == 12 && u[2] == 1 && u[3] == 6);
	assert_false(pipe_cost_units(nd, 2, u, &x));
	assert_false(pipe_cost_units(wide, 1, u, &x));
	pipe_cost_add(&t, 1, (1ull << 53) - 1);
	assert_true(pipe_cost_exact(0, t, 31, &s));
	assert_true(s == 0x1p53 - 1);
	assert_true(big + 1 == big); /* what a serial sum past 2^53 units does */
	pipe_cost_add(&t, 1, 1);
	assert_false(pipe_cost_exact(0, t, 31, &s));
	t = 0;
	pipe_cost_add(&t, (unsigned __int128)1 << 60, 1);
	assert_false(pipe_cost_exact(0, t, 31, &s));
	assert_false(pipe_cost_exact(0.5, 1, 31, &s));
	assert_true(pipe_cost_exact(2, 3, 31, &s));
	assert_true(s == 5);
	assert_true(pipe_cost_exact(0.5, 1, 30, &s));
	assert_true(s == 1);
	/* a part of 2^31 (a whole block) at cost 1: one unit 2^-31 each */
	struct fluid_piece q = {.lo = 0, .hi = 1};
	assert_true(pipe_piece_parts(&q, 4) == SCHED_ONE);
}

static void test_agree(void **state)
{
	static const struct {
		uint32_t servers;
		enum fluid_scenario s;
		enum fluid_collective c;
		uint32_t hops;
	} cases[] = {
	    {1, FLUID_ALL_LINKS, FLUID_ALLGATHER, 4},
	    {1, FLUID_ALL_LINKS, FLUID_ALLTOALL, 2},
	    {1, FLUID_ALL_LINKS, FLUID_REDUCE_SCATTER, 4},
	    {2, FLUID_NO_NVLINK, FLUID_ALLGATHER, 10},
	};
	struct fluid_net n;
	struct fluid_result r;
	struct fluid_group g = {0};
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(fluid_build_path(&n, 3, 1, &err), 0);
	struct fluid_opts o = {.collective = FLUID_BROADCAST, .method = FLUID_FULL};
	assert_int_equal(fluid_solve(&n, &o, &r, &err), 0);
	agree(&n, &r);
	fluid_result_free(&r);
	fluid_net_free(&n);
	/* One server's routings by DW; two servers' (16 GPUs through host
	 * memory, 10 hops) by mirrored DW over model W's group, its pieces
	 * every GPU's images: DW took 7.8 s to route it, mirrored 0.4 s. */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool mirrored = cases[i].servers > 1;

		assert_int_equal(fluid_build_modelw(&n, cases[i].servers, cases[i].s,
						    mirrored ? &g : NULL, &err),
				 0);
		solve_with(&n, cases[i].c, cases[i].hops, mirrored ? &g : NULL, &r);
		agree(&n, &r);
		if (i == 0)
			agree_costs(&n, &r);
		if (mirrored)
			shared_orders(&n, &r);
		fluid_result_free(&r);
		fluid_group_free(&g);
		fluid_net_free(&n);
	}
}

/* Room for one more piece of len hops at the end of the routing. */
static struct fluid_piece *push_piece(struct fluid_routing *rt, uint32_t len)
{
	rt->pieces = realloc(rt->pieces, (rt->npieces + 1) * sizeof(*rt->pieces));
	rt->hop_arc = realloc(rt->hop_arc, (rt->nhops + len) * sizeof(uint32_t));
	rt->hop_layer = realloc(rt->hop_layer, (rt->nhops + len) * sizeof(uint32_t));
	rt->cap_pieces = rt->npieces + 1;
	rt->cap_hops = rt->nhops + len;
	struct fluid_piece *q = &rt->pieces[rt->npieces++];
	q->first = (uint32_t)rt->nhops;
	q->nhops = len;
	rt->nhops += len;
	return q;
}

/* model W, one server, allgather at 4 hops. */
static void test_corrupt(void **state)
{
	struct fluid_net n;
	struct fluid_result r;
	struct verify_report pv, ev;
	struct ofc_error err = {0};

	(void)state;
	assert_int_equal(fluid_build_modelw(&n, 1, FLUID_ALL_LINKS, NULL, &err), 0);
	solve(&n, FLUID_ALLGATHER, 4, &r);
	struct fluid_routing *rt = &r.routing;
	size_t last = 0;

	for (size_t i = 0; i < rt->npieces; i++)
		if (rt->pieces[i].nhops > rt->pieces[last].nhops)
			last = i;
	/* A wrong transfer: a hop on an arc that does not leave where the
	 * piece is. */
	struct fluid_piece *q = &rt->pieces[last];
	uint32_t h = q->first + q->nhops - 1, arc = rt->hop_arc[h], other = 0;
	while (n.tail[other] == n.tail[arc] || n.tail[other] == n.head[rt->hop_arc[h - 1]])
		other++;
	rt->hop_arc[h] = other;
	assert_int_equal(both(&n, &r, 4, 1, &pv, &ev), -1);
	rt->hop_arc[h] = arc;
	/* A missing delivery: a piece one hop short. */
	q->nhops--;
	assert_int_equal(both(&n, &r, 4, 1, &pv, &ev), -1);
	q->nhops++;
	/* Capacity: the same pieces in steps 10% shorter than R/K. */
	assert_int_equal(both(&n, &r, 4, 0.9, &pv, &ev), -1);
	assert_non_null(strstr(pv.error, "over its"));
	/* An overrun only the overlap shows: a copy of a piece one layer
	 * later on the same arcs (a duplicate, which a copy collective
	 * allows). With K = 1 each step is one layer, and every layer stays
	 * within R b: both checks pass. With K = 8 a step holds 8 chunks'
	 * layers at 1/8 each, and the arc the routing saturates over its
	 * layers is over: both fail, on a capacity. */
	bool shown = false;
	for (size_t i = 0; i < rt->npieces && i < 64 && !shown; i++) {
		struct fluid_piece c = rt->pieces[i];
		struct fluid_piece *d = push_piece(rt, c.nhops);

		*d = (struct fluid_piece){.origin = c.origin,
					  .target = c.target,
					  .lo = c.lo,
					  .hi = c.hi,
					  .first = d->first,
					  .nhops = c.nhops};
		for (uint32_t k = 0; k < c.nhops; k++) {
			rt->hop_arc[d->first + k] = rt->hop_arc[c.first + k];
			rt->hop_layer[d->first + k] = rt->hop_layer[c.first + k] + 1;
		}
		if (both(&n, &r, 1, 1, &pv, &ev) == 0 && both(&n, &r, 8, 1, &pv, &ev) == -1) {
			assert_non_null(strstr(pv.error, "over its"));
			assert_non_null(strstr(ev.error, "over its"));
			shown = true;
		}
		rt->npieces--;
		rt->nhops -= c.nhops;
	}
	assert_true(shown);
	fluid_result_free(&r);
	fluid_net_free(&n);
}

/* Root b's longest piece (two hops at least) made to take, at its last
 * hop, an arc that does not leave where the piece is: *h that hop; the arc
 * it had, to put back. */
static uint32_t misroute_longest(const struct fluid_net *n, struct fluid_routing *rt, uint32_t b,
				 uint32_t *h)
{
	size_t at = SIZE_MAX;

	for (size_t i = 0; i < rt->npieces; i++)
		if (rt->pieces[i].origin == b && rt->pieces[i].nhops >= 2 &&
		    (at == SIZE_MAX || rt->pieces[i].nhops > rt->pieces[at].nhops))
			at = i;
	assert_true(at != SIZE_MAX);
	const struct fluid_piece *q = &rt->pieces[at];
	uint32_t arc, other = 0;

	*h = q->first + q->nhops - 1;
	arc = rt->hop_arc[*h];
	while (n->tail[other] == n->tail[arc] || n->tail[other] == n->head[rt->hop_arc[*h - 1]])
		other++;
	rt->hop_arc[*h] = other;
	return arc;
}

/* The pattern through the verifier whole, as the period's check first
 * did it (K = 1 planned anew, expanded, the capacities lifted). */
static int whole_pattern(const struct fluid_net *n, const struct fluid_pipe *p,
			 const struct verify_network *vn, struct verify_report *rep)
{
	struct fluid_steps_opts one = {.chunks = 1};
	struct fluid_steps_report brep;
	struct fluid_pipe base;
	struct schedule s;
	struct ofc_error err = {0};
	struct verify_network free_vn = *vn;
	double *bw = malloc((vn->narcs + 1) * sizeof(double));
	double *set_bw = malloc((vn->nsets + 1) * sizeof(double));
	struct verify_opts vo = {.network = &free_vn, .threads = 1};
	int rc;

	for (uint32_t a = 0; a < vn->narcs; a++)
		bw[a] = INFINITY;
	for (uint32_t k = 0; k < vn->nsets; k++)
		set_bw[k] = INFINITY;
	free_vn.bw = bw;
	free_vn.set_bw = set_bw;
	if (fluid_pipeline(n, p->r, &one, &base, &brep, &err) < 0 ||
	    fluid_pipe_expand(&base, &one, &brep, &s, &err) < 0)
		fail_msg("the pattern: %s", err.msg);
	rc = sched_verify(&s, &vo, rep);
	sched_free(&s);
	fluid_pipe_free(&base);
	free(bw);
	free(set_bw);
	return rc;
}

/* The pattern in parts (white box): its items run last first, for any
 * order must do; split by roots where the collective allows it. */
static int parts_pattern(const struct fluid_pipe *p, const struct verify_network *vn,
			 struct verify_report *rep)
{
	struct pipe_pattern pp;
	size_t n = pipe_pattern_start(&pp, p, vn);

	assert_true(pp.nroots > 0);
	assert_int_equal(n, pp.nroots);
	while (n-- > 0)
		pipe_pattern_item(&pp, n);
	return pipe_pattern_end(&pp, rep);
}

/* An allgather's and a reduce-scatter's pattern checked a root at a
 * time: the report the whole's when it passes (its duplicates too: a
 * copy of a piece a layer later), and a wrong transfer in any one root's
 * pieces fails the period's check on 1 to 4 threads with the whole's
 * first error: no root's verdict lost in the join. */
static void test_pattern_parts(void **state)
{
	static const enum fluid_collective colls[] = {FLUID_ALLGATHER, FLUID_REDUCE_SCATTER};
	struct ofc_error err = {0};

	(void)state;
	for (size_t ci = 0; ci < sizeof(colls) / sizeof(colls[0]); ci++) {
		struct fluid_net n;
		struct fluid_result r;
		struct fluid_steps_opts so = {.chunks = 4};
		struct fluid_steps_report rep;
		struct fluid_pipe p;
		struct verify_network vn;
		struct verify_report whole, parts, pv, pv0;
		uint32_t roots = 0;

		assert_int_equal(fluid_build_modelw(&n, 1, FLUID_ALL_LINKS, NULL, &err), 0);
		solve(&n, colls[ci], 4, &r);
		struct fluid_routing *rt = &r.routing;

		if (colls[ci] == FLUID_ALLGATHER) { /* a duplicate: a piece again, a layer later */
			struct fluid_piece c = rt->pieces[0], *d = push_piece(rt, c.nhops);

			*d = (struct fluid_piece){.origin = c.origin,
						  .target = c.target,
						  .lo = c.lo,
						  .hi = c.hi,
						  .first = d->first,
						  .nhops = c.nhops};
			for (uint32_t k = 0; k < c.nhops; k++) {
				rt->hop_arc[d->first + k] = rt->hop_arc[c.first + k];
				rt->hop_layer[d->first + k] = rt->hop_layer[c.first + k] + 1;
			}
		}
		if (fluid_pipeline(&n, &r, &so, &p, &rep, &err) < 0)
			fail_msg("pipeline: %s", err.msg);
		fluid_verify_network(&n, rep.step_time, &vn);
		assert_int_equal(whole_pattern(&n, &p, &vn, &whole), 0);
		assert_int_equal(parts_pattern(&p, &vn, &parts), 0);
		whole.network_cost = 0; /* the period's sum replaces it */
		same_report(&parts, &whole, "the pattern by roots");
		if (colls[ci] == FLUID_ALLGATHER)
			assert_true(whole.duplicate_blocks > 0);
		period_verify(&p, &vn, &pv0);
		for (uint32_t b = 0; b < n.nverts; b++) {
			if (!(n.kind[b] & FLUID_TERMINAL))
				continue;
			roots++;
			uint32_t h, arc = misroute_longest(&n, rt, b, &h);

			assert_int_equal(whole_pattern(&n, &p, &vn, &whole), -1);
			assert_int_equal(period_verify(&p, &vn, &pv), -1);
			assert_string_equal(pv.error, whole.error);
			assert_int_equal(pv.bad_step, whole.bad_step);
			assert_int_equal(pv.bad_xfer, whole.bad_xfer);
			rt->hop_arc[h] = arc;
		}
		assert_int_equal(roots, 8);
		period_verify(&p, &vn, &pv);
		same_report(&pv, &pv0, "the period put right");
		fluid_pipe_free(&p);
		fluid_result_free(&r);
		fluid_net_free(&n);
	}
}

/* The pattern's check on the structure (pipe_mirror.c) of a mirrored
 * routing, its pieces every GPU's images of one: n's items, the report. */
static size_t mirror_items(const struct fluid_pipe *p, const struct verify_network *vn,
			   struct verify_report *rep, int *rc)
{
	struct pipe_pattern pp;
	size_t n = pipe_pattern_start(&pp, p, vn), items = n;

	while (n-- > 0)
		pipe_pattern_item(&pp, n);
	*rc = pipe_pattern_end(&pp, rep);
	return items;
}

/* Model W, 2 servers (16 GPUs), allgather by mirrored DW over its group:
 * with the group the pattern is checked at one root of 16 and the period's
 * report is the one without it (every root checked) to the last bit; a
 * wrong transfer in any other root's pieces makes that root no image, so
 * it is checked itself and the period is refused with the whole pattern's
 * first error; elements that are not symmetries of the network (not a
 * permutation, a kind changed) are never used, even where the pieces are
 * their images: every root is checked. */
static void test_pattern_mirrored(void **state)
{
	struct ofc_error err = {0};
	struct fluid_net n;
	struct fluid_group g = {0};
	struct fluid_result r;
	struct fluid_steps_opts so = {.chunks = 4};
	struct fluid_steps_report rep;
	struct fluid_pipe p;
	struct verify_network vn;
	struct verify_report with, without, whole, parts;
	uint32_t roots = 0, first = UINT32_MAX, unused = UINT32_MAX;
	int rc;

	(void)state;
	assert_int_equal(fluid_build_modelw(&n, 2, FLUID_ALL_LINKS, &g, &err), 0);
	solve_with(&n, FLUID_ALLGATHER, 8, &g, &r);
	if (fluid_pipeline(&n, &r, &so, &p, &rep, &err) < 0)
		fail_msg("pipeline: %s", err.msg);
	fluid_verify_network(&n, rep.step_time, &vn);
	for (uint32_t v = 0; v < n.nverts && first == UINT32_MAX; v++)
		if (n.kind[v] & FLUID_TERMINAL)
			first = v;
	assert_int_equal(period_verify(&p, &vn, &without), 0);
	p.group = &g;
	assert_int_equal(mirror_items(&p, &vn, &parts, &rc), 1);
	assert_int_equal(rc, 0);
	assert_int_equal(whole_pattern(&n, &p, &vn, &whole), 0);
	whole.network_cost = 0; /* the period's sum replaces it */
	same_report(&parts, &whole, "the pattern by one root");
	assert_int_equal(period_verify(&p, &vn, &with), 0);
	same_report(&with, &without, "the period on its structure");

	struct fluid_routing *rt = &r.routing;

	for (uint32_t b = 0; b < n.nverts; b++) {
		if (!(n.kind[b] & FLUID_TERMINAL) || b == first)
			continue;
		roots++;
		uint32_t h, arc = misroute_longest(&n, rt, b, &h);

		assert_int_equal(mirror_items(&p, &vn, &parts, &rc), 2);
		assert_int_equal(rc, -1);
		assert_int_equal(whole_pattern(&n, &p, &vn, &whole), -1);
		assert_int_equal(period_verify(&p, &vn, &with), -1);
		assert_string_equal(with.error, whole.error);
		assert_int_equal(with.bad_step, whole.bad_step);
		rt->hop_arc[h] = arc;
	}
	assert_int_equal(roots, 15);
	/* every element but the identity made to take a vertex that the first
	 * GPU's pieces never pass (so their images are still the others'
	 * pieces) where it takes that GPU: no permutation, and a switch or
	 * memory taken to a GPU */
	uint8_t *used = calloc(n.nverts, 1);

	for (size_t i = 0; i < rt->npieces; i++)
		for (uint32_t k = 0; rt->pieces[i].origin == first && k < rt->pieces[i].nhops;
		     k++) {
			used[n.tail[rt->hop_arc[rt->pieces[i].first + k]]] = 1;
			used[n.head[rt->hop_arc[rt->pieces[i].first + k]]] = 1;
		}
	for (uint32_t v = 0; v < n.nverts && unused == UINT32_MAX; v++)
		if (!used[v] && !(n.kind[v] & FLUID_TERMINAL))
			unused = v;
	free(used);
	assert_true(unused != UINT32_MAX);
	for (uint32_t k = 0; k < g.order; k++) {
		uint32_t *h = g.vert + (size_t)k * n.nverts;

		if (h[first] != first)
			h[unused] = h[first];
	}
	assert_int_equal(mirror_items(&p, &vn, &parts, &rc), 16);
	assert_int_equal(rc, 0);
	assert_int_equal(period_verify(&p, &vn, &with), 0);
	same_report(&with, &without, "the period, the group refused");
	fluid_pipe_free(&p);
	fluid_result_free(&r);
	fluid_group_free(&g);
	fluid_net_free(&n);
}

/* ofc schedule's fluid allgather, reduce-scatter, broadcast and reduce
 * (schedule_fluid) are planned and verified from their period: no transfer until
 * fluid_answer_expand, which gives fluid_schedule's transfers for the same
 * routing and K, and the verifier's figures on those transfers are the
 * period's to the last bit (the answers print them). */
static void test_schedule_by_period(void **state)
{
	static const enum sched_collective colls[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER,
						      SCHED_BROADCAST, SCHED_REDUCE};
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	(void)state;

	if (fabric_open("examples/modelw/all-links-1.yaml", &f, &err) < 0)
		fail_msg("%s", err.msg);
	for (size_t i = 0; i < sizeof(colls) / sizeof(colls[0]); i++) {
		struct schedule_query q = {.fabric = f, .collective = colls[i]};
		struct fluid_query x = {0};
		struct fluid_answer a;
		struct fluid_steps_opts so = {.chunks = 0};
		struct fluid_steps_report rep;
		struct schedule s;
		struct verify_network vn;
		struct verify_report vr;

		if (schedule_fluid(&q, &x, &a, &err) < 0)
			fail_msg("schedule_fluid: %s", err.msg);
		assert_true(a.by_period);
		assert_true(a.verified);
		assert_int_equal(a.s.nsteps, 0);
		assert_int_equal(a.s.nxfers, 0);
		assert_int_equal(fluid_answer_steps(&a), a.rep.steps);
		assert_true(fluid_answer_transfers(&a) > 0);
		size_t n = fluid_answer_transfers(&a);

		if (fluid_answer_expand(&q, &a, &err) < 0)
			fail_msg("fluid_answer_expand: %s", err.msg);
		assert_int_equal(a.s.nsteps, a.rep.steps);
		assert_int_equal(a.s.nxfers, n);
		assert_true(a.s.verified);
		/* the explicit schedule of the same routing and K */
		so.chunks = a.rep.chunks;
		if (fluid_schedule(a.net, &a.r, &so, &s, &rep, &err) < 0)
			fail_msg("fluid_schedule: %s", err.msg);
		assert_int_equal(s.nxfers, a.s.nxfers);
		assert_memory_equal(s.xfers, a.s.xfers, s.nxfers * sizeof(struct xfer));
		assert_memory_equal(s.step_start, a.s.step_start,
				    (s.nsteps + 1) * sizeof(uint32_t));
		fluid_verify_network(a.net, a.rep.step_time, &vn);
		struct verify_opts vo = {.network = &vn};

		assert_int_equal(sched_verify(&a.s, &vo, &vr), 0);
		assert_true(vr.network_cost == a.vr.network_cost);
		assert_true(vr.max_utilisation == a.vr.max_utilisation);
		sched_free(&s);
		fluid_answer_free(&a);
	}
	fabric_free(f);
}

/* The explicit allreduce of two periods: the reduce-scatter's steps,
 * and the allgather's from step ag_first (where they overlap, a step
 * holds the reduce-scatter's transfers and then the allgather's), with
 * each step's time (the reduce-scatter's where it has one). */
static void explicit_allreduce(const struct fluid_pipe *rs, const struct fluid_pipe *ag,
			       uint32_t ag_first, double t1, double t2, struct schedule *s,
			       double **times)
{
	uint32_t S = ag_first + ag->steps > rs->steps ? ag_first + ag->steps : rs->steps;
	struct xfer *buf = malloc((rs->ntransfers + ag->ntransfers + 1) * sizeof(struct xfer));

	sched_init(s, SCHED_ALLREDUCE, "fluid", rs->net->nverts);
	*times = malloc((S + 1) * sizeof(double));
	for (uint32_t t = 0; t < S; t++) {
		sched_step(s);
		(*times)[t] = t < rs->steps ? t1 : t2;
		if (t < rs->steps) {
			fluid_pipe_fill_step(rs, t, buf);
			for (size_t i = 0; i < rs->count[t]; i++)
				sched_add(s, &buf[i]);
		}
		if (t >= ag_first && t - ag_first < ag->steps) {
			fluid_pipe_fill_step(ag, t - ag_first, buf);
			for (size_t i = 0; i < ag->count[t - ag_first]; i++)
				sched_add(s, &buf[i]);
		}
	}
	free(buf);
}

/* Both checks of an allreduce of rs and ag (the allgather from step
 * ag_first): the verdicts agree, and the figures to the last bit when
 * both pass; the period's verdict. */
static int both_allreduce(const struct fluid_net *n, const struct fluid_pipe *rs,
			  const struct fluid_pipe *ag, uint32_t ag_first, struct verify_report *pv,
			  struct verify_report *ev)
{
	struct verify_network vn;
	struct schedule s;
	double *times;

	explicit_allreduce(rs, ag, ag_first, rs->step_time, ag->step_time, &s, &times);
	fluid_verify_network(n, rs->step_time, &vn);
	int pr = fluid_allreduce_verify(rs, ag, ag_first, &vn, ag->step_time, pv);
	struct fluid_pipe rs2 = *rs;
	struct verify_report r;

	for (unsigned t = 1; t <= 4; t++) {
		rs2.threads = t; /* the allreduce's check runs on the reduce-scatter's */
		assert_int_equal(fluid_allreduce_verify(&rs2, ag, ag_first, &vn, ag->step_time, &r),
				 pr);
		same_report(&r, pv, "the allreduce on threads");
	}

	vn.step_times = times;
	struct verify_opts vo = {.network = &vn};
	int er = sched_verify(&s, &vo, ev);

	if (pr != er)
		fail_msg("allreduce: the periods say %s (%s), the expansion %s (%s)",
			 pr ? "bad" : "good", pv->error, er ? "bad" : "good", ev->error);
	assert_int_equal(pv->nsteps, s.nsteps);
	assert_int_equal(pv->ntransfers, s.nxfers);
	if (pr == 0 &&
	    (pv->max_utilisation != ev->max_utilisation || pv->network_cost != ev->network_cost))
		fail_msg("allreduce: utilisation %.17g, cost %.17g; want %.17g, %.17g",
			 pv->max_utilisation, pv->network_cost, ev->max_utilisation,
			 ev->network_cost);
	sched_free(&s);
	free(times);
	return pr;
}

/* ofc schedule's fluid allreduce is planned, verified and priced from its
 * two phases' periods: no transfer until fluid_answer_expand, whose
 * schedule is the reduce-scatter's then the allgather's explicit ones
 * (as the allreduce was first built), verified the same to the last bit;
 * and a wrong transfer in the reduce-scatter's period, a delivery missing
 * from the allgather's, or the allgather starting a step early (a shard
 * sent before it is reduced) fail both checks. */
static void test_allreduce_by_period(void **state)
{
	struct fabric *f = NULL;
	struct ofc_error err = {0};
	struct schedule_query q = {.collective = SCHED_ALLREDUCE, .size = 64u << 20};
	struct fluid_query x = {0};
	struct fluid_answer a;
	struct verify_report pv, ev;
	struct schedule rs, ag, old;
	struct fluid_steps_report rep;
	(void)state;

	if (fabric_open("examples/modelw/all-links-1.yaml", &f, &err) < 0)
		fail_msg("%s", err.msg);
	q.fabric = f;
	if (schedule_fluid(&q, &x, &a, &err) < 0)
		fail_msg("schedule_fluid: %s", err.msg);
	assert_true(a.by_period && a.allreduce && a.verified);
	assert_int_equal(a.s.nxfers, 0);
	assert_int_equal(fluid_answer_steps(&a), a.rep.steps + a.rep_ag.steps);
	assert_int_equal(both_allreduce(a.net, &a.pipe, &a.pipe_ag, a.pipe.steps, &pv, &ev), 0);
	assert_true(pv.network_cost == a.vr.network_cost);
	assert_true(pv.max_utilisation == a.vr.max_utilisation);
	/* the whole schedule as it was first built: each phase's, appended */
	struct fluid_steps_opts s1 = {.chunks = a.rep.chunks}, s2 = {.chunks = a.rep_ag.chunks};

	if (fluid_schedule(a.net, &a.r, &s1, &rs, &rep, &err) < 0 ||
	    fluid_schedule(a.net, &a.r_ag, &s2, &ag, &rep, &err) < 0)
		fail_msg("fluid_schedule: %s", err.msg);
	sched_init(&old, SCHED_ALLREDUCE, "fluid", a.net->nverts);
	sched_append(&old, &rs);
	sched_append(&old, &ag);
	if (fluid_answer_expand(&q, &a, &err) < 0)
		fail_msg("fluid_answer_expand: %s", err.msg);
	assert_int_equal(a.s.nsteps, old.nsteps);
	assert_int_equal(a.s.nxfers, old.nxfers);
	assert_memory_equal(a.s.xfers, old.xfers, old.nxfers * sizeof(struct xfer));
	assert_memory_equal(a.s.step_start, old.step_start, (old.nsteps + 1) * sizeof(uint32_t));
	assert_true(a.s.verified);
	sched_free(&old);
	sched_free(&rs);
	sched_free(&ag);

	/* A wrong transfer in the reduce-scatter: a hop on an arc that does
	 * not leave where its piece is. */
	struct fluid_routing *rt = (struct fluid_routing *)&a.r.routing;
	size_t last = 0;

	for (size_t i = 0; i < rt->npieces; i++)
		if (rt->pieces[i].nhops > rt->pieces[last].nhops)
			last = i;
	struct fluid_piece *p = &rt->pieces[last];
	uint32_t h = p->first + p->nhops - 1, arc = rt->hop_arc[h], other = 0;

	while (a.net->tail[other] == a.net->tail[arc] ||
	       a.net->tail[other] == a.net->head[rt->hop_arc[h - 1]])
		other++;
	rt->hop_arc[h] = other;
	assert_int_equal(both_allreduce(a.net, &a.pipe, &a.pipe_ag, a.pipe.steps, &pv, &ev), -1);
	rt->hop_arc[h] = arc;
	/* A delivery missing from the allgather: a piece one hop short. */
	struct fluid_routing *rg = (struct fluid_routing *)&a.r_ag.routing;

	last = 0;
	for (size_t i = 0; i < rg->npieces; i++)
		if (rg->pieces[i].nhops > rg->pieces[last].nhops)
			last = i;
	rg->pieces[last].nhops--;
	assert_int_equal(both_allreduce(a.net, &a.pipe, &a.pipe_ag, a.pipe.steps, &pv, &ev), -1);
	rg->pieces[last].nhops++;
	/* The allgather a step early: its first step sends the first chunk of
	 * each shard in the step that finishes reducing it. */
	assert_int_equal(both_allreduce(a.net, &a.pipe, &a.pipe_ag, a.pipe.steps - 1, &pv, &ev),
			 -1);
	assert_non_null(strstr(pv.error, "before the reduce-scatter has reduced it"));
	/* and right again */
	assert_int_equal(both_allreduce(a.net, &a.pipe, &a.pipe_ag, a.pipe.steps, &pv, &ev), 0);
	/* Each phase at its own step time: half of it fails in that phase. */
	struct verify_network vn;

	fluid_verify_network(a.net, a.rep.step_time / 2, &vn);
	assert_int_equal(
	    fluid_allreduce_verify(&a.pipe, &a.pipe_ag, a.pipe.steps, &vn, a.rep_ag.step_time, &pv),
	    -1);
	assert_true(pv.bad_step < a.pipe.steps);
	assert_non_null(strstr(pv.error, "(step time x bandwidth)"));
	fluid_verify_network(a.net, a.rep.step_time, &vn);
	assert_int_equal(fluid_allreduce_verify(&a.pipe, &a.pipe_ag, a.pipe.steps, &vn,
						a.rep_ag.step_time / 2, &pv),
			 -1);
	assert_true(pv.bad_step >= a.pipe.steps);
	assert_non_null(strstr(pv.error, "(step time x bandwidth)"));
	fluid_answer_free(&a);
	fabric_free(f);
}

/* A routing reserved for what it will hold grows to exactly that, once:
 * the pieces added after it stay where they were put (no doubling, whose
 * old and new arrays side by side were the 1,024-GPU solve's peak), and
 * read back as added. */
static void test_routing_reserve(void **state)
{
	(void)state;
	struct fluid_routing rt = {0};
	uint32_t arcs[3] = {7, 8, 9}, layers[3] = {0, 1, 2};

	routing_add_piece(&rt, 1, UINT32_MAX, 0, 0.5, arcs, layers, 3);
	routing_reserve(&rt, 20, 40);
	assert_int_equal(rt.cap_pieces, 21);
	assert_int_equal(rt.cap_hops, 43);
	const struct fluid_piece *pieces = rt.pieces;
	const uint32_t *hop_arc = rt.hop_arc, *hop_layer = rt.hop_layer;

	for (uint32_t i = 0; i < 20; i++)
		routing_add_piece(&rt, 2 + i, UINT32_MAX, 0, 1, arcs, layers, 2);
	assert_ptr_equal(rt.pieces, pieces);
	assert_ptr_equal(rt.hop_arc, hop_arc);
	assert_ptr_equal(rt.hop_layer, hop_layer);
	assert_int_equal(rt.npieces, 21);
	assert_int_equal(rt.nhops, 43);
	assert_int_equal(rt.pieces[20].origin, 21);
	assert_int_equal(rt.pieces[20].first, 41);
	assert_int_equal(rt.hop_arc[41], 7);
	assert_int_equal(rt.hop_layer[42], 1);
	/* room already there: no change */
	routing_reserve(&rt, 0, 0);
	assert_int_equal(rt.cap_pieces, 21);
	assert_int_equal(rt.cap_hops, 43);
	free(rt.pieces);
	free(rt.hop_arc);
	free(rt.hop_layer);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_agree),
	    cmocka_unit_test(test_corrupt),
	    cmocka_unit_test(test_pattern_parts),
	    cmocka_unit_test(test_pattern_mirrored),
	    cmocka_unit_test(test_schedule_by_period),
	    cmocka_unit_test(test_allreduce_by_period),
	    cmocka_unit_test(test_routing_reserve),
	    cmocka_unit_test(test_cost_units),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
