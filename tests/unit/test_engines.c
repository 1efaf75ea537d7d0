/* The engine table (controller/schedule/engines.c) is the one list of
 * algorithms: every row is known by name, listed by `ofc schedule --help`,
 * named by the unknown-name message of its fabric, built by the pipeline's
 * dispatch under its own name, and accepted in a config's collectives (but
 * ofc schedule's own tables); a name no row has is refused everywhere. A row
 * added without the rest following fails here. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "controller/config/config.h"
#include "controller/schedule/internal.h"
#include "tests/unit/words.h"

/* The first collective a mask holds. */
static enum sched_collective first_collective(unsigned mask)
{
	for (int c = SCHED_ALLGATHER; c <= SCHED_REDUCE; c++)
		if (mask & ENGINE_C(c))
			return (enum sched_collective)c;
	fail_msg("a row serves no collective");
	return SCHED_ALLGATHER;
}

static struct schedule_query direct_query(const char *algo, enum sched_collective c)
{
	return (struct schedule_query){.spec = "torus:4x4",
				       .collective = c,
				       .algorithm = algo,
				       .size = 1 << 20,
				       .threads = 1,
				       .no_certify = true,
				       .reduced = SCHEDULE_REDUCED_AUTO};
}

static const struct optree_ring ring16 = {.nodes = 16,
					  .wavelengths = 2,
					  .fibres = 1,
					  .max_add = 256,
					  .rate = 40e9,
					  .mrr_delay = 25e-6,
					  .oeo_delay = 10e-9,
					  .block_bytes = 4 << 20};

static void test_help_and_names(void **state)
{
	struct strbuf help = STRBUF_INIT;
	const struct engine_ops *e;

	(void)state;
	schedule_algorithms_help(&help, "  ", 79);
	assert_non_null(help.buf);
	for (unsigned i = 0; (e = engine_at(i)); i++) {
		/* 'all' is --algo's own word, the rest are listed */
		if (!(e->flags & ENGINE_EVERY) && !has_word(help.buf, e->name))
			fail_msg("--help does not list '%s':\n%s", e->name, help.buf);
		assert_int_equal(schedule_algorithm_known(e->name), !(e->flags & ENGINE_COMPARE));
		assert_int_equal(schedule_algorithm_compares(e->name, e->fabrics),
				 !!(e->flags & ENGINE_COMPARE));
		assert_int_equal(schedule_algorithm_lowers(e->name),
				 !!(e->flags & ENGINE_LOWERING));
		assert_ptr_equal(engine_find(e->name, e->fabrics), e);
		assert_true(e->serves != 0);
		/* a direct-connect row is built by its own build, or is a table
		 * of other rows ('all', swing-all) */
		assert_true(!(e->fabrics & ENGINE_DIRECT) || e->build ||
			    (e->flags & (ENGINE_EVERY | ENGINE_TORUS_ALL)));
		/* in swing-all's table: both variants, or on the ports it says */
		assert_true(!e->torus || (e->flags & ENGINE_VARIANT) || e->torus_ports);
	}
	for (const char *p = help.buf; *p; p++)
		assert_true(p == help.buf || p[-1] != '\n' || *p == ' ');
	assert_false(schedule_algorithm_known("nope"));
	assert_false(schedule_algorithm_known("all"));
	/* the CLI's checks read the same rows: comparisons by fabric, and
	 * the rows --variant goes with */
	assert_true(schedule_algorithm_compares("all", ENGINE_RING));
	assert_true(schedule_algorithm_compares("all", ENGINE_DIRECT));
	assert_true(schedule_algorithm_compares("swing-all", ENGINE_DIRECT));
	assert_false(schedule_algorithm_compares("swing-all", ENGINE_RING));
	assert_false(schedule_algorithm_compares("optree", ENGINE_RING));
	assert_false(schedule_algorithm_compares("nope", ENGINE_ANY));
	assert_true(schedule_algorithm_variant("swing"));
	assert_true(schedule_algorithm_variant("recursive-doubling"));
	assert_false(schedule_algorithm_variant("bfb"));
	assert_false(schedule_algorithm_variant("nope"));
	assert_true(schedule_algorithm_lowers("mcf") && !schedule_algorithm_lowers("nope"));
	sb_free(&help);
}

/* Every direct-connect row runs through schedule_compute under its name
 * (comparisons: as a table); a WDM ring's builds the optree/ algorithm of
 * the same name. */
static void test_dispatch(void **state)
{
	const struct engine_ops *e;

	(void)state;
	for (unsigned i = 0; (e = engine_at(i)); i++) {
		struct schedule_result r;
		struct ofc_error err = {0};

		if (e->fabrics & ENGINE_DIRECT) {
			struct schedule_query q =
			    direct_query(e->name, first_collective(e->serves));

			if (schedule_compute(&q, &r, NULL, &err) < 0)
				fail_msg("%s: %s", e->name, err.msg);
			assert_int_equal(r.compare, !!(e->flags & ENGINE_COMPARE));
			if (e->flags & ENGINE_COMPARE)
				assert_true(r.nout > 1);
			else if (strcmp(r.main->algo, e->name) != 0)
				fail_msg("--algo %s built %s", e->name, r.main->algo);
			/* The row's enum runs the library's schedule of its
			 * name (bucket: torus-rings'). */
			const char *built = NULL;
			if (e->build == ENGINE_BUILD_BASELINE ||
			    e->build == ENGINE_BUILD_TORUS_ROUTED)
				built = baseline_algo_name(e->baseline);
			if (e->build == ENGINE_BUILD_TORUS)
				built = torus_algo_name(e->torus_algo);
			if (e->build == ENGINE_BUILD_ALLTOALL)
				built = a2a_algo_name(e->a2a);
			if (built) {
				assert_true(r.main->have);
				assert_string_equal(r.main->s.algorithm, built);
				if (e->build !=
				    ENGINE_BUILD_TORUS_ROUTED) /* bucket's is another's */
					assert_string_equal(built, e->name);
			}
			schedule_result_free(&r);
		}
		if (e->fabrics & ENGINE_RING) {
			struct schedule_query q = {.ring = &ring16,
						   .ring_name = "ring0",
						   .algorithm = e->name,
						   .collective = first_collective(e->serves),
						   .no_certify = true};

			if (schedule_compute(&q, &r, NULL, &err) < 0)
				fail_msg("%s on a WDM ring: %s", e->name, err.msg);
			if (e->flags & ENGINE_COMPARE)
				assert_true(r.nout > 1);
			else if (strcmp(r.main->algo, e->name) != 0)
				fail_msg("--algo %s on a WDM ring built %s", e->name, r.main->algo);
			schedule_result_free(&r);
		}
		if (e->fabrics & ENGINE_SERVERS) {
			struct schedule_query q = {.algorithm = e->name};

			assert_true(schedule_fluid_request(&q));
		}
	}
}

/* A name no row has: the message lists every row of the fabric that
 * serves the collective. */
static void test_unknown(void **state)
{
	static const enum sched_collective colls[] = {SCHED_ALLGATHER, SCHED_REDUCE_SCATTER,
						      SCHED_ALLREDUCE, SCHED_ALLTOALL};
	const struct engine_ops *e;
	struct schedule_result r;
	struct ofc_error err = {0};

	(void)state;
	for (size_t k = 0; k < sizeof(colls) / sizeof(colls[0]); k++) {
		struct schedule_query q = direct_query("nope", colls[k]);

		assert_int_equal(schedule_compute(&q, &r, NULL, &err), -1);
		assert_int_equal(err.code, OFC_E_USAGE);
		for (unsigned i = 0; (e = engine_at(i)); i++)
			if ((e->fabrics & ENGINE_DIRECT) && (e->serves & ENGINE_C(colls[k])) &&
			    !has_word(err.msg, e->name))
				fail_msg("'%s' is not in: %s", e->name, err.msg);
	}
	struct schedule_query q = {.ring = &ring16, .algorithm = "nope"};
	q.collective = SCHED_ALLGATHER;
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), -1);
	for (unsigned i = 0; (e = engine_at(i)); i++)
		if ((e->fabrics & ENGINE_RING) && !has_word(err.msg, e->name))
			fail_msg("'%s' is not in: %s", e->name, err.msg);
	/* --reduced names the rows it goes with */
	struct schedule_query qr = direct_query("expansion", SCHED_ALLREDUCE);
	qr.reduced = SCHEDULE_REDUCED_ALWAYS;
	assert_int_equal(schedule_compute(&qr, &r, NULL, &err), -1);
	for (unsigned i = 0; (e = engine_at(i)); i++)
		if ((e->fabrics & ENGINE_DIRECT) && e->reduced && !has_word(err.msg, e->name))
			fail_msg("'%s' is not in: %s", e->name, err.msg);
}

/* A direct-connect request q for row e's name on spec, computed: the
 * result (free it), failing the test when it is not computed at all. */
static void compute(struct schedule_result *r, const char *spec, const char *algo,
		    enum sched_collective c, enum schedule_reduce reduced)
{
	struct schedule_query q = direct_query(algo, c);
	struct ofc_error err = {0};

	q.spec = spec;
	q.reduced = reduced;
	if (schedule_compute(&q, r, NULL, &err) < 0)
		fail_msg("%s on %s: %s", algo, spec, err.msg);
}

/* A reduction's check keeps what the request has left of its memory
 * limit (verify_opts.reduce_bytes), not the verifier's own 512 MiB: with
 * nothing left the same schedule is refused with what one chunk of it
 * would need, and with the limit again verified. */
static void test_verify_memory(void **state)
{
	struct schedule_query q = direct_query("bfb", SCHED_ALLREDUCE);
	struct schedule_result r;
	struct ofc_error err = {0};

	(void)state;
	q.spec = "hypercube:6";
	q.reduced = SCHEDULE_REDUCED_NEVER;
	q.max_memory = mem_held() + (1ull << 30);
	if (schedule_compute(&q, &r, NULL, &err) < 0)
		fail_msg("%s", err.msg);
	assert_int_equal(r.memory_limit, q.max_memory);
	assert_false(r.main->is_reduced);
	assert_true(r.main->verified);
	/* the limit reached: what the check may hold is nothing */
	r.memory_limit = 1;
	assert_int_equal(outcome_verify_bytes(&r), 1);
	outcome_finish(&r, r.main);
	assert_false(r.main->verified);
	if (!strstr(r.main->verify_error, "checking shard 0 alone"))
		fail_msg("%s", r.main->verify_error);
	r.memory_limit = mem_held() + (1ull << 30);
	assert_true(outcome_verify_bytes(&r) >= (1ull << 30) - (64ull << 20));
	outcome_finish(&r, r.main);
	assert_true(r.main->verified);
	schedule_result_free(&r);
	/* without --max-memory: half the machine's */
	compute(&r, "hypercube:4", "bfb", SCHED_ALLREDUCE, SCHEDULE_REDUCED_NEVER);
	assert_int_equal(r.memory_limit, mem_physical() / 2);
	schedule_result_free(&r);
}

/* 3% of an A x B torus's ports failed, none two of one host, as the arcs
 * they take down ("u>v,...": port p of u along +x -x +y -y, both ways
 * through it), into buf. */
static void ports_failed(uint32_t a, uint32_t b, char *buf, size_t len)
{
	uint32_t n = a * b, nused = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	bool *used = calloc(n, sizeof(bool)), *arc = calloc(4 * (size_t)n, sizeof(bool));
	size_t at = 0;

	assert_true(used && arc);
	while (nused < 4 * n * 3 / 100) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint32_t u = (uint32_t)(x % n), p = (uint32_t)((x >> 32) % 4);
		if (used[u])
			continue;
		used[u] = true;
		nused++;
		int di = p == 0 ? 1 : p == 1 ? -1 : 0, dk = p == 2 ? 1 : p == 3 ? -1 : 0;
		uint32_t i = u % a, k = u / a;
		uint32_t v = (i + a + di) % a + (k + b + dk) % b * a;
		uint32_t w = (i + a - di) % a + (k + b - dk) % b * a;
		/* (each arc once: (u, p) is u's along p, (w, p) w's into u) */
		if (!arc[4 * (size_t)u + p])
			at += (size_t)snprintf(buf + at, len - at, "%s%u>%u", at ? "," : "", u, v);
		if (!arc[4 * (size_t)w + p])
			at += (size_t)snprintf(buf + at, len - at, ",%u>%u", w, u);
		arc[4 * (size_t)u + p] = arc[4 * (size_t)w + p] = true;
		assert_true(at < len);
	}
	free(used);
	free(arc);
}

/* BFB refused for size on a torus with failed ports (its explicit
 * schedule and its healthy program and patch over the memory limit): an
 * allreduce is Swing's around the failed arcs, verified, with BFB named
 * and its refusal kept, priced against BFB on the healthy torus; a failed
 * host, or Swing over the limit too, leaves BFB's refusal with Swing's
 * reason after it, an allgather BFB's alone. */
static void test_swing_instead(void **state)
{
	static char fail[16384];
	struct schedule_query q = direct_query(NULL, SCHED_ALLREDUCE);
	struct schedule_result r;
	struct ofc_error err = {0};

	(void)state;
	ports_failed(64, 64, fail, sizeof(fail) - 8);
	q.spec = "torus:64x64";
	q.fail = fail;
	q.size = 64u << 20;
	/* BFB's patch needs about 306 MiB here (its own estimate), Swing's
	 * program a few over what the process holds (a sanitizer's build
	 * holds more) */
	q.max_memory = 288ull << 20;
	if (schedule_compute(&q, &r, NULL, &err) < 0 || schedule_check(&r, &err) < 0)
		fail_msg("%s", err.msg);
	const struct schedule_outcome *o = r.main;
	assert_string_equal(o->algo, "swing");
	assert_string_equal(o->s.algorithm, "swing");
	assert_true(o->verified && o->reroute && o->reroute->ndet > 0);
	assert_string_equal(o->fallback_from, "bfb");
	if (!strstr(o->fallback_why, "BFB allreduce on 4096 nodes needs about ") ||
	    !strstr(o->fallback_why, "; not kept as structure: "))
		fail_msg("%s", o->fallback_why);
	if (!strstr(r.note, "bfb refused (BFB allreduce") ||
	    !strstr(r.note, "): Swing around the failed links instead, bandwidth-optimal") ||
	    strstr(r.note, "BFB explicit on the degraded graph"))
		fail_msg("%s", r.note);
	/* against BFB on the healthy torus, and the degraded bound */
	assert_true(o->healthy_us > 0 && o->healthy_us < o->time_us);
	assert_true(r.have_degraded && o->lb_us > r.healthy_lb_us);
	schedule_result_free(&r);

	/* a failed host: Swing's exchanges include it */
	size_t len = strlen(fail);
	snprintf(fail + len, sizeof(fail) - len, ",7");
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_check(&r, &err), -1);
	if (!strstr(err.msg, "; not kept as structure: ") ||
	    !strstr(err.msg, "; nor Swing around the failed links: a failed host"))
		fail_msg("%s", err.msg);
	fail[len] = 0;
	/* Swing over the limit too: its own estimate after BFB's */
	q.max_memory = 1u << 20;
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_check(&r, &err), -1);
	if (!strstr(err.msg, "; not kept as structure: ") ||
	    !strstr(err.msg, "; nor Swing around the failed links: reduced bandwidth-optimal swing "
			     "on 4096 nodes needs about "))
		fail_msg("%s", err.msg);
	/* an allgather: BFB's refusal, no Swing tried */
	q.collective = SCHED_ALLGATHER;
	q.max_memory = 48ull << 20; /* (its patch: about 54 MiB) */
	assert_int_equal(schedule_compute(&q, &r, NULL, &err), 0);
	assert_int_equal(schedule_check(&r, &err), -1);
	if (!strstr(err.msg, "; not kept as structure: ") || strstr(err.msg, "Swing"))
		fail_msg("%s", err.msg);
}

/* The nodes node 0 sends to in an explicit schedule. */
static unsigned peers_of_0(const struct schedule *s)
{
	bool seen[SCHED_MAX_NODES + 1] = {0};
	unsigned n = 0;

	for (size_t k = 0; k < s->nxfers; k++)
		if (s->xfers[k].src == 0 && !seen[s->xfers[k].dst]) {
			seen[s->xfers[k].dst] = true;
			n++;
		}
	return n;
}

/* The properties the engine builds read from a row, each against what the
 * row's engine does: a row that says one thing and builds another fails
 * here. */
static void test_row_properties(void **state)
{
	const struct engine_ops *e;
	struct schedule_result r;
	/* swing-all's rows: [0] the variants', [1] the torus_ports ones' */
	char want[2][16][24];
	unsigned ports[16], n[2] = {0};

	(void)state;
	for (unsigned i = 0; (e = engine_at(i)); i++) {
		if (!(e->fabrics & ENGINE_DIRECT))
			continue;
		/* ENGINE_SPLIT: Swing's reduced program is 2^D nodes' (reps > 1) */
		if (e->flags & ENGINE_VARIANT) {
			compute(&r, "torus:4x4", e->name, SCHED_ALLREDUCE, SCHEDULE_REDUCED_ALWAYS);
			assert_true(r.main->applies && r.main->is_reduced);
			if ((r.main->group.reps > 1) != !!(e->flags & ENGINE_SPLIT))
				fail_msg("%s: %u programs, ENGINE_SPLIT %s", e->name,
					 r.main->group.reps,
					 e->flags & ENGINE_SPLIT ? "set" : "unset");
			schedule_result_free(&r);
			/* (ofc run reads the labels back) */
			assert_string_equal(
			    schedule_algorithm_of_label(e->label ? e->label : e->name), e->name);
			for (int v = 0; v < 2; v++)
				snprintf(want[0][n[0]++], sizeof(want[0][0]), "%s/%c",
					 e->label ? e->label : e->name, v ? 'L' : 'B');
		}
		/* ENGINE_BINARY: the baseline's symmetric form is a hypercube's
		 * (XOR on the ids), not a torus's */
		if (e->build == ENGINE_BUILD_BASELINE) {
			bool hc, torus;

			compute(&r, "hypercube:4", e->name, SCHED_ALLREDUCE,
				SCHEDULE_REDUCED_ALWAYS);
			hc = r.main->applies;
			schedule_result_free(&r);
			compute(&r, "torus:4x4", e->name, SCHED_ALLREDUCE, SCHEDULE_REDUCED_ALWAYS);
			torus = r.main->applies;
			schedule_result_free(&r);
			if ((hc && !torus) != !!(e->flags & ENGINE_BINARY))
				fail_msg("%s: reduced on a hypercube %d, on a torus %d, "
					 "ENGINE_BINARY %s",
					 e->name, hc, torus,
					 e->flags & ENGINE_BINARY ? "set" : "unset");
		}
		/* torus_ports: the neighbours each node's schedule sends to, and
		 * baseline: the schedule it is, built under the row's name */
		if (e->torus_ports) {
			compute(&r, "torus:4x4", e->name, SCHED_ALLREDUCE, SCHEDULE_REDUCED_AUTO);
			assert_true(r.main->applies && r.main->have && !r.main->is_reduced);
			ports[n[1]] = peers_of_0(&r.main->s);
			assert_int_equal(ports[n[1]], e->torus_ports == ENGINE_PORTS_DEGREE
							  ? r.degree
							  : e->torus_ports);
			schedule_result_free(&r);
			snprintf(want[1][n[1]++], sizeof(want[1][0]), "%s", e->name);
		}
		/* ENGINE_COLGEN: the MCF's column generation ran */
		if (e->serves & ENGINE_C(SCHED_ALLTOALL) && !(e->flags & ENGINE_COMPARE)) {
			compute(&r, "torus:4x4", e->name, SCHED_ALLTOALL, SCHEDULE_REDUCED_AUTO);
			assert_true(r.main->applies);
			assert_int_equal(r.main->have_mcf, !!(e->flags & ENGINE_COLGEN));
			schedule_result_free(&r);
		}
	}
	/* swing-all: every variant row both ways, then the torus_ports rows,
	 * each priced on the ports it says */
	compute(&r, "torus:4x4", "swing-all", SCHED_ALLREDUCE, SCHEDULE_REDUCED_AUTO);
	assert_int_equal(r.nout, n[0] + n[1]);
	for (unsigned k = 0; k < r.nout; k++) {
		const struct schedule_outcome *o = &r.out[k];
		bool base = k >= n[0];

		assert_string_equal(o->algo, want[base][base ? k - n[0] : k]);
		if (!o->applies || !o->verified)
			fail_msg("swing-all's %s: %s%s", o->algo, o->why, o->verify_error);
		if (base)
			assert_int_equal(o->tf.instances, ports[k - n[0]]);
	}
	schedule_result_free(&r);
}

/* One default a fabric and collective, a row of that fabric; the
 * pipeline runs it for a request that names none. The lowerings: a
 * comparison runs mcf by each, under its name, and the help names each. */
static void test_defaults_and_lowerings(void **state)
{
	static const unsigned kinds[] = {ENGINE_DIRECT, ENGINE_RING, ENGINE_SERVERS};
	const struct a2a_lowering *l;
	const struct engine_ops *e;
	struct schedule_result r;
	struct strbuf help = STRBUF_INIT;

	(void)state;
	for (size_t k = 0; k < ARRAY_SIZE(kinds); k++)
		for (int c = SCHED_ALLGATHER; c <= SCHED_REDUCE; c++) {
			unsigned n = 0;
			const char *d =
			    schedule_default_algorithm(kinds[k], (enum sched_collective)c);

			for (unsigned i = 0; (e = engine_at(i)); i++)
				n += (e->fabrics & kinds[k]) && (e->defaults & ENGINE_C(c));
			assert_int_equal(n, 1);
			e = engine_find(d, kinds[k]);
			assert_non_null(e);
			/* (a rooted collective's default refuses it: the fluid engine's) */
			assert_true(c > SCHED_ALLTOALL || (e->serves & ENGINE_C(c)));
			if (kinds[k] == ENGINE_DIRECT) {
				struct schedule_query q =
				    direct_query(NULL, (enum sched_collective)c);

				assert_string_equal(schedule_pick_algorithm(&q), d);
			}
		}
	/* one request's list (ofcd's refusal, its --help): every row but the
	 * comparisons */
	schedule_algorithms_one(&help, "", "", 0);
	for (unsigned i = 0; (e = engine_at(i)); i++)
		if (has_word(help.buf, e->name) == !!(e->flags & ENGINE_COMPARE))
			fail_msg("'%s' %s one request's list: %s", e->name,
				 e->flags & ENGINE_COMPARE ? "is in" : "is not in", help.buf);
	sb_reset(&help);
	assert_null(a2a_lowering_find("nope"));
	/* a name the table lacks is refused by the pipeline before the
	 * engine (which is handed the table's row), with the table's list;
	 * a name it has runs as that row */
	{
		struct schedule_query q = direct_query("mcf", SCHED_ALLTOALL);
		struct ofc_error err = {0};
		struct strbuf want = STRBUF_INIT;

		q.lowering = "nope";
		assert_int_equal(schedule_compute(&q, &r, NULL, &err), -1);
		schedule_result_free(&r);
		assert_int_equal(err.code, OFC_E_INPUT);
		a2a_lowering_names(&want, false, ", ");
		assert_non_null(strstr(err.msg, want.buf));
		assert_non_null(strstr(err.msg, "unknown lowering 'nope'"));
		sb_free(&want);
		q.lowering = "single";
		if (schedule_compute(&q, &r, NULL, &err) < 0)
			fail_msg("mcf/single: %s", err.msg);
		assert_string_equal(r.out[0].lowering, "single");
		schedule_result_free(&r);
	}
	schedule_lowerings_help(&help, "  ", "  ", 79);
	compute(&r, "torus:4x4", "all", SCHED_ALLTOALL, SCHEDULE_REDUCED_AUTO);
	for (unsigned i = 0; (l = a2a_lowering_at(i)); i++) {
		char name[32];
		bool ran = false;

		assert_ptr_equal(a2a_lowering_find(l->name), l);
		assert_int_equal(l->kind, i); /* the i-th is kind i */
		if (!has_word(help.buf, l->name))
			fail_msg("--lowering's help does not name '%s':\n%s", l->name, help.buf);
		snprintf(name, sizeof(name), "mcf/%s", l->name);
		for (uint32_t k = 0; k < r.nout; k++)
			ran |= strcmp(r.out[k].algo, name) == 0 && r.out[k].applies;
		if (!ran)
			fail_msg("'all' did not run %s", name);
	}
	schedule_result_free(&r);
	sb_free(&help);
}

static struct fabric *config(const char *text)
{
	struct ofc_error err = {0};
	struct fabric *f = NULL;
	char buf[1024];

	if (config_parse("t.yaml", text, strlen(text), &f, &err) < 0 ||
	    fabric_validate(f, &err) < 0)
		fail_msg("%s", ofc_error_str(&err, buf, sizeof(buf)));
	return f;
}

/* A config's `algorithm:` is checked against the rows of its fabric's
 * kind: each is accepted (and is what runs), ofc schedule's own tables
 * and the other kind's names are not. */
static void test_config_names(void **state)
{
	const struct engine_ops *e;

	(void)state;
	for (unsigned i = 0; (e = engine_at(i)); i++) {
		for (int ring = 0; ring < 2; ring++) {
			unsigned kind = ring ? ENGINE_RING : ENGINE_DIRECT;
			enum sched_collective c = first_collective(e->serves);
			char text[1024];
			struct schedule_result r;
			struct ofc_error err = {0};

			snprintf(
			    text, sizeof(text),
			    "name: t\nhosts:\n  count: 16\n  prefix: h\n  ports: 4\n%s"
			    "collectives:\n  - op: %s\n    size: 1MiB\n    algorithm: %s\n",
			    ring ? "rings:\n  - name: ring0\n    nodes: all\n    wavelengths: 2\n"
				   "    rate_per_wavelength: 40Gbps\n    interfaces_per_node: 4\n"
				   "    mrrs_per_interface: 64\n"
				 : "topology: torus:4x4\n",
			    sched_collective_name(c), e->name);
			struct fabric *f = config(text);
			struct schedule_query q = {.fabric = f,
						   .collective = c,
						   .threads = 1,
						   .no_certify = true,
						   .reduced = SCHEDULE_REDUCED_AUTO};
			/* (a name may be a row of each kind: ring) */
			const struct engine_ops *x = engine_find(
			    e->name, ring ? ENGINE_RING : ENGINE_DIRECT | ENGINE_SERVERS);
			bool ok = x && !(x->flags & ENGINE_CLI_ONLY);
			int rc = schedule_compute(&q, &r, NULL, &err);

			if (ok && (x->fabrics & kind)) {
				if (rc < 0)
					fail_msg("%s in a config: %s", e->name, err.msg);
				assert_string_equal(r.algorithm, e->name);
				schedule_result_free(&r);
			} else if (!ok) {
				assert_int_equal(rc, -1);
				if (!strstr(err.msg, "is not one for"))
					fail_msg("%s in a config: %s", e->name, err.msg);
			} else if (rc == 0) {
				schedule_result_free(&r);
			}
			fabric_free(f);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_help_and_names), cmocka_unit_test(test_dispatch),
	    cmocka_unit_test(test_unknown),	   cmocka_unit_test(test_config_names),
	    cmocka_unit_test(test_row_properties), cmocka_unit_test(test_defaults_and_lowerings),
	    cmocka_unit_test(test_verify_memory),  cmocka_unit_test(test_swing_instead),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
