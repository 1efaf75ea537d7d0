/* A change in stages under a loss budget (controller/reconfig/stages.c):
 * the stages, replayed here one by one from the start, end at the target;
 * every stage's topology is port permutations; each stage changes only
 * circuits whose host ports it says are out of use; its loss, priced again
 * here on the topology before it less those ports, is within the budget;
 * a tighter budget never takes fewer stages; a budget no single circuit
 * fits and one out of range are refused. Under held hosts, no stage takes
 * a held host's port out of use, each device circuit (both ends free)
 * that changes has its ports out of use, and the price is the free
 * hosts' graph. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/reconfig/reconfig.h"
#include "sched/sched.h"
#include "topo/topo.h"

static void ports_of(const char *spec, struct port_map *pm)
{
	struct ofc_error err = {0};
	struct graph *g = NULL;

	if (topo_build(spec, &g, &err) < 0 || topo_ports(g, pm, &err) < 0)
		fail_msg("%s: %s", spec, err.msg);
	graph_free(g);
}

/* tau_B of pm less the host ports in dark (row * n + node), as the
 * planner's doc says a stage is priced: recomputed from the arcs. */
static double tau_without(const struct port_map *pm, const uint32_t *dark, uint32_t ndark)
{
	uint32_t n = pm->n, d = pm->d, m = 0;
	bool *off = calloc((size_t)n * d, sizeof(*off));
	uint32_t *t = malloc((size_t)n * d * sizeof(*t)), *h = malloc((size_t)n * d * sizeof(*h));
	struct degraded_bound b;

	for (uint32_t i = 0; i < ndark; i++)
		off[dark[i]] = true;
	for (uint32_t j = 0; j < d; j++)
		for (uint32_t u = 0; u < n; u++) {
			uint32_t v = pm->to[(size_t)j * n + u];

			if (!off[(size_t)j * n + u] && !off[(size_t)j * n + v]) {
				t[m] = u;
				h[m++] = v;
			}
		}
	struct graph *g = graph_from_arcs(n, m, t, h, "check");
	int rc = degraded_bound(g, SCHED_ALLGATHER, d, 0, &b);

	graph_free(g);
	free(off);
	free(t);
	free(h);
	return rc < 0 ? INFINITY : b.tau_b;
}

/* Whether pm less the dark host ports is strongly connected: every node
 * reached from node 0 along the arcs, and node 0 from every node (a
 * fixpoint over the arcs, independent of the planner's own search). */
static bool connected_without(const struct port_map *pm, const uint32_t *dark, uint32_t ndark)
{
	uint32_t n = pm->n, d = pm->d;
	bool *off = calloc((size_t)n * d, sizeof(*off)), ok = true;

	for (uint32_t i = 0; i < ndark; i++)
		off[dark[i]] = true;
	for (int dir = 0; dir < 2 && ok; dir++) {
		bool *in = calloc(n, sizeof(*in)), more = true;

		in[0] = true;
		while (more) {
			more = false;
			for (uint32_t j = 0; j < d; j++)
				for (uint32_t u = 0; u < n; u++) {
					uint32_t v = pm->to[(size_t)j * n + u], from = dir ? v : u,
						 to = dir ? u : v;

					if (off[(size_t)j * n + u] || off[(size_t)j * n + v] ||
					    !in[from] || in[to])
						continue;
					in[to] = more = true;
				}
		}
		for (uint32_t u = 0; u < n; u++)
			ok = ok && in[u];
		free(in);
	}
	free(off);
	return ok;
}

static bool is_dark(const struct stage *s, uint32_t port)
{
	for (uint32_t i = 0; i < s->ndark; i++)
		if (s->dark[i] == port)
			return true;
	return false;
}

/* Replays p from `from`: each stage's changes inside its dark ports, each
 * row a permutation, the loss within budget, the end at `to`. */
static void check_plan(const struct port_map *from, const struct port_map *to,
		       const struct stage_plan *p, double max_loss)
{
	uint32_t n = from->n, d = from->d, moved = 0;
	const struct port_map *cur = from;
	double ref = fmax(tau_without(from, NULL, 0), tau_without(to, NULL, 0));

	assert_true(p->n >= 1);
	assert_true(p->n >= p->min_stages);
	for (uint32_t s = 0; s < p->n; s++) {
		const struct stage *st = &p->v[s];
		double tau = tau_without(cur, st->dark, st->ndark), loss = fmax(0, 1 - ref / tau);
		uint32_t changed = 0;

		assert_true(connected_without(cur, st->dark, st->ndark));
		assert_true(loss <= max_loss + 1e-9);
		assert_true(fabs(loss - st->loss) < 1e-9);
		for (uint32_t j = 0; j < d; j++) {
			bool *hit = calloc(n, sizeof(*hit));

			for (uint32_t u = 0; u < n; u++) {
				uint32_t a = cur->to[(size_t)j * n + u],
					 b = st->after.to[(size_t)j * n + u];

				assert_false(hit[b]); /* a permutation */
				hit[b] = true;
				if (a != b) {
					changed++;
					/* the old circuit's both ends and the new one's out of use
					 */
					assert_true(is_dark(st, j * n + u));
					assert_true(is_dark(st, j * n + a));
					assert_true(is_dark(st, j * n + b));
				}
			}
			free(hit);
		}
		assert_int_equal(changed, st->moved);
		/* each changed circuit: the old one removed, the new one set */
		assert_int_equal(st->ops, 2 * changed);
		assert_false(st->leftover);
		/* stage_loss prices the same graph the same way */
		struct stage_req q = {.from = from, .to = to, .max_loss = max_loss};
		bool exact;

		assert_true(fabs(stage_loss(&q, cur, st->dark, st->ndark, ref, &exact) - st->loss) <
			    1e-9);
		/* every stage's own topology connects every host */
		assert_true(isfinite(tau_without(&st->after, NULL, 0)));
		moved += st->moved;
		cur = &st->after;
	}
	assert_memory_equal(cur->to, to->to, (size_t)n * d * sizeof(uint32_t));
	assert_int_equal(moved, p->moved);
	assert_true(p->moved >= p->fewest);
}

static void test_torus_to_circulant_within_budget(void **state)
{
	struct port_map a, b;
	struct stage_plan p25, p40;
	struct ofc_error err = {0};

	(void)state;
	ports_of("torus:8x8", &a);
	ports_of("circulant:64:1,8", &b);
	struct stage_req q = {.from = &a, .to = &b, .max_loss = 0.25};

	assert_int_equal(stage_plan_make(&q, &p25, &err), 0);
	check_plan(&a, &b, &p25, 0.25);
	q.max_loss = 0.40;
	assert_int_equal(stage_plan_make(&q, &p40, &err), 0);
	check_plan(&a, &b, &p40, 0.40);
	/* a larger budget never needs more stages */
	assert_true(p40.n <= p25.n);
	/* and one stage when the whole change fits: a budget of 99% */
	struct stage_plan p99;

	q.max_loss = 0.99;
	assert_int_equal(stage_plan_make(&q, &p99, &err), 0);
	check_plan(&a, &b, &p99, 0.99);
	assert_true(p99.n <= p40.n);
	stage_plan_free(&p25);
	stage_plan_free(&p40);
	stage_plan_free(&p99);
	port_map_free(&a);
	port_map_free(&b);
}

/* A torus to its transpose: the y links of the new width connect the
 * hosts only once the wrap-around x links are changed, so the small
 * cycles go first; every stage stays connected and within 25%. */
static void test_torus_transpose(void **state)
{
	struct port_map a, b;
	struct stage_plan p;
	struct ofc_error err = {0};

	(void)state;
	ports_of("torus:8x16", &a);
	ports_of("torus:16x8", &b);
	struct stage_req q = {.from = &a, .to = &b, .max_loss = 0.25};

	if (stage_plan_make(&q, &p, &err) < 0)
		fail_msg("%s", err.msg);
	check_plan(&a, &b, &p, 0.25);
	assert_int_equal(p.moved, p.fewest);
	stage_plan_free(&p);
	port_map_free(&a);
	port_map_free(&b);
}

/* A long cycle cut into parts: a budget too small for a whole cycle of
 * one row still ends at the target, each part within the budget. */
static void test_long_cycle_cut(void **state)
{
	struct port_map a, b;
	struct stage_plan p;
	struct ofc_error err = {0};

	(void)state;
	ports_of("circulant:64:1", &a);
	ports_of("circulant:64:1", &b);
	/* row 0 of b: u -> u + 3 (mod 64), one cycle through every node */
	for (uint32_t u = 0; u < 64; u++)
		b.to[u] = (u + 3) % 64;
	for (uint32_t u = 0; u < 64; u++) /* row 1 its inverse, as a link both ways */
		b.to[64 + u] = (u + 61) % 64;
	struct stage_req q = {.from = &a, .to = &b, .max_loss = 0.6};

	if (stage_plan_make(&q, &p, &err) < 0)
		fail_msg("%s", err.msg);
	check_plan(&a, &b, &p, 0.6);
	stage_plan_free(&p);
	port_map_free(&a);
	port_map_free(&b);
}

/* The fewest stages: a port that is both the start of a changing circuit
 * and the end of another is one transceiver out of use (counted twice,
 * a change the budget takes whole was split in two); the most units that
 * fit go together (halving stopped at half and took a stage more); and
 * where no one stage fits, the bound says 2. */
static void test_fewest_stages(void **state)
{
	static const struct {
		const char *from, *to;
		double max_loss;
		uint32_t stages, min_stages;
	} c[] = {
	    {"circulant:64:1,8", "circulant:64:1,3", 0.6, 1, 1},
	    {"torus:8x16", "torus:16x8", 0.25, 4, 4},
	    /* both wrap-around links of a row at once cut its hosts off */
	    {"torus:8x8", "circulant:64:1,8", 0.6, 2, 2},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct port_map a, b;
		struct stage_plan p;
		struct ofc_error err = {0};

		ports_of(c[i].from, &a);
		ports_of(c[i].to, &b);
		struct stage_req q = {.from = &a, .to = &b, .max_loss = c[i].max_loss};

		if (stage_plan_make(&q, &p, &err) < 0)
			fail_msg("%s: %s", c[i].to, err.msg);
		check_plan(&a, &b, &p, c[i].max_loss);
		if (p.n != c[i].stages || p.min_stages != c[i].min_stages)
			fail_msg("%s to %s at %g: %u stages (at least %u), not %u (%u)", c[i].from,
				 c[i].to, c[i].max_loss, p.n, p.min_stages, c[i].stages,
				 c[i].min_stages);
		assert_int_equal(p.moved, p.fewest);
		stage_plan_free(&p);
		port_map_free(&a);
		port_map_free(&b);
	}
}

static void test_refused(void **state)
{
	struct port_map a, b;
	struct stage_plan p;
	struct ofc_error err = {0};

	(void)state;
	ports_of("torus:8x8", &a);
	ports_of("circulant:64:1,8", &b);
	struct stage_req q = {.from = &a, .to = &b, .max_loss = 0};

	assert_int_equal(stage_plan_make(&q, &p, &err), -1);
	assert_non_null(strstr(err.msg, "above 0% and below 100%"));
	q.max_loss = 1;
	assert_int_equal(stage_plan_make(&q, &p, &err), -1);
	/* 1%: no circuit moves without taking more */
	q.max_loss = 0.01;
	assert_int_equal(stage_plan_make(&q, &p, &err), -1);
	assert_non_null(strstr(err.msg, "no stage fits a loss of 1%"));
	assert_null(p.v);
	port_map_free(&a);
	port_map_free(&b);
}

/* tau_B of pm's free hosts (fixed false) less the dark ports, and
 * whether that graph is strongly connected: recomputed from the arcs. */
static double tau_free(const struct port_map *pm, const bool *fixed, const uint32_t *dark,
		       uint32_t ndark, bool *connected)
{
	uint32_t n = pm->n, d = pm->d, m = 0, nf = 0;
	bool *off = calloc((size_t)n * d, sizeof(*off));
	uint32_t *id = malloc(n * sizeof(*id));
	uint32_t *t = malloc((size_t)n * d * sizeof(*t)), *h = malloc((size_t)n * d * sizeof(*h));
	struct degraded_bound b;

	for (uint32_t i = 0; i < ndark; i++)
		off[dark[i]] = true;
	for (uint32_t u = 0; u < n; u++)
		id[u] = fixed[u] ? UINT32_MAX : nf++;
	for (uint32_t j = 0; j < d; j++)
		for (uint32_t u = 0; u < n; u++) {
			uint32_t v = pm->to[(size_t)j * n + u];

			if (!fixed[u] && !fixed[v] && !off[(size_t)j * n + u] &&
			    !off[(size_t)j * n + v]) {
				t[m] = id[u];
				h[m++] = id[v];
			}
		}
	/* connected: a fixpoint from free host 0, forwards then backwards */
	*connected = true;
	for (int dir = 0; dir < 2; dir++) {
		bool *in = calloc(nf, sizeof(*in)), more = true;

		in[0] = true;
		while (more) {
			more = false;
			for (uint32_t e = 0; e < m; e++) {
				uint32_t from = dir ? h[e] : t[e], to = dir ? t[e] : h[e];

				if (in[from] && !in[to])
					in[to] = more = true;
			}
		}
		for (uint32_t u = 0; u < nf; u++)
			*connected = *connected && in[u];
		free(in);
	}
	struct graph *g = graph_from_arcs(nf, m, t, h, "check");
	int rc = degraded_bound(g, SCHED_ALLGATHER, d, 0, &b);

	graph_free(g);
	free(off);
	free(id);
	free(t);
	free(h);
	return rc < 0 ? INFINITY : b.tau_b;
}

/* Replays p from `from` under the held hosts: no held port out of use,
 * each changed device circuit's ports out of use, each new one's in-port
 * idle or out of use, the loss on the free hosts within budget, the
 * circuits set on the devices counted, the end at `to`. */
static void check_held_plan(const struct port_map *from, const struct port_map *to,
			    const bool *fixed, const struct stage_plan *p, double max_loss)
{
	uint32_t n = from->n, d = from->d, moved = 0;
	const struct port_map *cur = from;
	bool conn;
	double ref =
	    fmax(tau_free(from, fixed, NULL, 0, &conn), tau_free(to, fixed, NULL, 0, &conn));

	assert_true(p->n >= 1);
	for (uint32_t s = 0; s < p->n; s++) {
		const struct stage *st = &p->v[s];
		double tau = tau_free(cur, fixed, st->dark, st->ndark, &conn);
		double loss = fmax(0, 1 - ref / tau);
		uint32_t set = 0, ops = 0;

		assert_true(conn);
		assert_true(loss <= max_loss + 1e-9);
		assert_true(fabs(loss - st->loss) < 1e-9);
		for (uint32_t i = 0; i < st->ndark; i++)
			assert_false(fixed[st->dark[i] % n]);
		for (uint32_t j = 0; j < d; j++) {
			const uint32_t *a = cur->to + (size_t)j * n,
				       *b = st->after.to + (size_t)j * n;
			uint32_t *inv = malloc(n * sizeof(*inv));

			for (uint32_t u = 0; u < n; u++)
				inv[a[u]] = u;
			for (uint32_t u = 0; u < n; u++) {
				if (a[u] == b[u])
					continue;
				if (!fixed[u] && !fixed[a[u]]) { /* a device circuit goes */
					ops++;
					assert_true(is_dark(st, j * n + u));
					assert_true(is_dark(st, j * n + a[u]));
				}
				if (!fixed[u] && !fixed[b[u]]) { /* one comes */
					set++;
					ops++;
					uint32_t w = inv[b[u]];

					assert_true(fixed[w] || is_dark(st, j * n + b[u]));
				}
			}
			free(inv);
		}
		assert_int_equal(set, st->moved);
		assert_int_equal(ops, st->ops); /* the device operations: those alone */
		moved += st->moved;
		cur = &st->after;
	}
	assert_memory_equal(cur->to, to->to, (size_t)n * d * sizeof(uint32_t));
	assert_int_equal(moved, p->moved);
	assert_true(p->moved >= p->fewest);
}

/* Held hosts h0-h3 and h8-h9 (two partitions' worth): the plan leaves
 * their ports in use throughout, where the plan without them takes some
 * out; every stage within 25% on the free hosts, and the free part ends
 * at the target. */
static void test_held_hosts_untouched(void **state)
{
	struct port_map a, b;
	struct stage_plan p, plain;
	struct ofc_error err = {0};
	bool fixed[64] = {0};
	uint32_t on_held = 0;

	(void)state;
	ports_of("torus:8x8", &a);
	ports_of("circulant:64:1,8", &b);
	fixed[0] = fixed[1] = fixed[2] = fixed[3] = fixed[8] = fixed[9] = true;
	struct stage_req q = {.from = &a, .to = &b, .max_loss = 0.25};

	if (stage_plan_make(&q, &plain, &err) < 0)
		fail_msg("%s", err.msg);
	for (uint32_t s = 0; s < plain.n; s++)
		for (uint32_t i = 0; i < plain.v[s].ndark; i++)
			on_held += fixed[plain.v[s].dark[i] % 64];
	assert_true(on_held > 0); /* without them, the held ports go dark */
	q.fixed = fixed;
	if (stage_plan_make(&q, &p, &err) < 0)
		fail_msg("%s", err.msg);
	check_held_plan(&a, &b, fixed, &p, 0.25);
	assert_true(p.moved < plain.moved); /* the held ends' circuits move nowhere */
	/* every host but one held: refused, nothing planned */
	bool most[64];

	memset(most, 1, sizeof(most));
	most[5] = false;
	q.fixed = most;
	stage_plan_free(&plain); /* (stage_plan_make clears its plan first) */
	assert_int_equal(stage_plan_make(&q, &plain, &err), -1);
	assert_non_null(strstr(err.msg, "63 of the 64 hosts are held"));
	stage_plan_free(&p);
	stage_plan_free(&plain);
	port_map_free(&a);
	port_map_free(&b);
}

/* stage_loss, as ofcd prices the leftovers' stage (the host ports whose
 * device circuits are not the record's): the tau_B of what is left
 * against the reference, 1 when a host is cut off; and the plan's words
 * count a leftover stage's circuits and operations with the others'. */
static void test_stage_loss_and_leftover_words(void **state)
{
	struct port_map a;
	struct ofc_error err = {0};
	struct stage_plan p;
	struct strbuf sb = STRBUF_INIT;
	bool exact;
	uint32_t dark[8], cut[4];

	(void)state;
	ports_of("torus:8x8", &a);
	struct stage_req q = {.from = &a, .to = &a, .max_loss = 0.25};
	double ref = tau_without(&a, NULL, 0);

	assert_true(stage_loss(&q, &a, NULL, 0, ref, &exact) < 1e-12);
	for (uint32_t i = 0; i < 8; i++) /* port 0 of hosts 0-7 */
		dark[i] = i;
	assert_true(fabs(stage_loss(&q, &a, dark, 8, ref, &exact) -
			 fmax(0, 1 - ref / tau_without(&a, dark, 8))) < 1e-12);
	assert_true(stage_loss(&q, &a, dark, 8, ref, &exact) > 0);
	for (uint32_t j = 0; j < 4; j++) /* every port of host 5 */
		cut[j] = j * 64 + 5;
	assert_true(stage_loss(&q, &a, cut, 4, ref, &exact) == 1);
	/* a plan, and a leftover stage before it as ofcd puts one */
	struct port_map b;

	ports_of("circulant:64:1,8", &b);
	q.to = &b;
	if (stage_plan_make(&q, &p, &err) < 0)
		fail_msg("%s", err.msg);
	uint32_t ops = 0;

	for (uint32_t i = 0; i < p.n; i++)
		ops += p.v[i].ops;
	p.v = realloc(p.v, (p.n + 1) * sizeof(*p.v));
	memmove(&p.v[1], &p.v[0], p.n * sizeof(*p.v));
	p.v[0] = (struct stage){.after = {64, 4, malloc(256 * sizeof(uint32_t))},
				.dark = malloc(sizeof(cut)),
				.ndark = 4,
				.moved = 3,
				.removed = 2,
				.ops = 5,
				.loss = 1,
				.leftover = true};
	memcpy(p.v[0].after.to, a.to, 256 * sizeof(uint32_t));
	memcpy(p.v[0].dark, cut, sizeof(cut));
	p.n++;
	p.moved += 3;
	stage_plan_text(&p, "circulant:64:1,8", &sb);
	char want[200];

	snprintf(want, sizeof(want),
		 "%u circuits moved (the fewest possible %u from the record's "
		 "topology, and the 3 leftovers' in a stage of their own)",
		 p.moved, p.fewest);
	assert_non_null(strstr(sb.buf, want));
	assert_non_null(strstr(sb.buf, "; stage 1: 3 circuits, 4 host ports out of use, loss "
				       "100.00%, the leftovers: 2 cross-connects the record's"));
	assert_non_null(strstr(sb.buf, "the fabric is over the budget already before it"));
	snprintf(want, sizeof(want), "; %u device operations in all", ops + 5);
	assert_non_null(strstr(sb.buf, want));
	sb_free(&sb);
	stage_plan_free(&p);
	port_map_free(&a);
	port_map_free(&b);
}

static void test_nothing_to_do(void **state)
{
	struct port_map a;
	struct stage_plan p;
	struct ofc_error err = {0};

	(void)state;
	ports_of("torus:8x8", &a);
	struct stage_req q = {.from = &a, .to = &a, .max_loss = 0.25};

	assert_int_equal(stage_plan_make(&q, &p, &err), 0);
	assert_int_equal(p.n, 0);
	assert_int_equal(p.moved, 0);
	stage_plan_free(&p);
	port_map_free(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_torus_to_circulant_within_budget),
	    cmocka_unit_test(test_torus_transpose),
	    cmocka_unit_test(test_long_cycle_cut),
	    cmocka_unit_test(test_fewest_stages),
	    cmocka_unit_test(test_refused),
	    cmocka_unit_test(test_nothing_to_do),
	    cmocka_unit_test(test_held_hosts_untouched),
	    cmocka_unit_test(test_stage_loss_and_leftover_words),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
