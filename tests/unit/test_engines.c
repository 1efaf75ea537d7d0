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

/* The first collective a mask holds. */
static enum sched_collective first_collective(unsigned mask)
{
	for (int c = SCHED_ALLGATHER; c <= SCHED_REDUCE; c++)
		if (mask & ENGINE_C(c))
			return (enum sched_collective)c;
	fail_msg("a row serves no collective");
	return SCHED_ALLGATHER;
}

/* name appears in text as a whole word (not inside "bfb-lp" for "bfb"). */
static bool has_word(const char *text, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
		bool start = p == text || strchr(" (,:\n", p[-1]);
		bool end = strchr(" ),;\n", p[n]) != NULL;

		if (start && end)
			return true;
	}
	return false;
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
		/* a direct-connect row is built by its own build, or is 'all' */
		assert_true(!(e->fabrics & ENGINE_DIRECT) || e->build || (e->flags & ENGINE_EVERY));
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
	    cmocka_unit_test(test_help_and_names),
	    cmocka_unit_test(test_dispatch),
	    cmocka_unit_test(test_unknown),
	    cmocka_unit_test(test_config_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
