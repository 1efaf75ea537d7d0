/* ofc rwa: routing and wavelength assignment for a demand set on a ring. */
#include "controller/cli/internal.h"
#include "proto/ring.pb-c.h"
#include "rwa/rwa.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* The answer as its message (proto/ring.proto), which --json prints
 * through the encoder and the text reads: one model, two encodings.
 * a's lightpaths are allocated: rwa_answer_free. */
static void rwa_answer(Ofc__V1__RwaAnswer *a, const struct rwa_ring *ring,
		       const struct rwa_demand *dem, size_t ndem, const struct rwa_solution *sol,
		       const struct rwa_report *rep, const char *engine, const char *objective,
		       const char *source, bool verified)
{
	bool max_served = strcmp(objective, "max-served") == 0;
	size_t n = 0, k = 0;

#define SET(f, v) (a->has_##f = 1, a->f = (v))
	*a = (Ofc__V1__RwaAnswer)OFC__V1__RWA_ANSWER__INIT;
	a->engine = (char *)engine;
	a->objective = (char *)objective;
	a->method = (char *)rep->method;
	SET(nodes, ring->nodes);
	SET(wavelengths, ring->wavelengths);
	SET(fibres, ring->fibres);
	a->demands_from = (char *)source;
	SET(demands, ndem);
	SET(lightpaths_demanded, rep->demanded);
	SET(lightpaths_served, rep->served);
	SET(served_upper_bound, rep->served_bound);
	SET(wavelengths_used, rep->wavelengths_used);
	SET(lower_bound, rep->lower_bound);
	SET(gap, max_served ? (int64_t)rep->served_bound - (int64_t)rep->served
			    : (int64_t)rep->wavelengths_used - (int64_t)rep->lower_bound);
	a->gap_unit = max_served ? "lightpaths" : "wavelengths";
	SET(relaxation, rep->relaxation);
	SET(max_load, rwa_solution_max_load(ring, dem, ndem, sol));
	SET(optimal, rep->optimal);
	SET(time_limit_hit, rep->time_limit_hit);
	SET(fits, rep->fits);
	SET(ilp_solves, rep->ilp_solves);
	SET(seconds, rep->seconds);
	SET(verified, verified);
#undef SET
	for (size_t i = 0; i < sol->nruns; i++)
		n += sol->runs[i].count;
	Ofc__V1__RwaLightpath *lp = xcalloc(n + 1, sizeof(*lp));
	a->lightpaths = xcalloc(n + 1, sizeof(*a->lightpaths));
	for (size_t i = 0; i < sol->nruns; i++) {
		const struct rwa_run *r = &sol->runs[i];

		for (uint32_t c = r->colour; c < r->colour + r->count; c++, k++) {
			lp[k] = (Ofc__V1__RwaLightpath)OFC__V1__RWA_LIGHTPATH__INIT;
			lp[k].has_src = lp[k].has_dst = lp[k].has_fibre = lp[k].has_wavelength = 1;
			lp[k].src = dem[r->id].src;
			lp[k].dst = dem[r->id].dst;
			lp[k].direction = r->dir == RWA_CW ? "cw" : "ccw";
			lp[k].fibre = c % ring->fibres;
			lp[k].wavelength = c / ring->fibres;
			a->lightpaths[k] = &lp[k];
		}
	}
	a->n_lightpaths = k;
}

static void rwa_answer_free(Ofc__V1__RwaAnswer *a)
{
	free(a->n_lightpaths ? a->lightpaths[0] : NULL);
	free(a->lightpaths);
}

static void write_text(const Ofc__V1__RwaAnswer *a, bool list)
{
	bool max_served = strcmp(a->objective, "max-served") == 0;

	printf("RWA on a %u-node ring, %u wavelength%s x %u fibre%s per direction: %llu demand%s, "
	       "%llu lightpaths (%s)\n",
	       a->nodes, a->wavelengths, a->wavelengths == 1 ? "" : "s", a->fibres,
	       a->fibres == 1 ? "" : "s", (unsigned long long)a->demands,
	       a->demands == 1 ? "" : "s", (unsigned long long)a->lightpaths_demanded,
	       a->demands_from);
	printf("  engine            %s: %s\n", a->engine, a->method);
	if (max_served) {
		printf("  served            %llu of %llu lightpaths within %u wavelengths "
		       "(upper bound %llu, gap %llu)%s\n",
		       (unsigned long long)a->lightpaths_served,
		       (unsigned long long)a->lightpaths_demanded, a->wavelengths,
		       (unsigned long long)a->served_upper_bound, (unsigned long long)a->gap,
		       a->optimal ? ": optimal" : "");
		printf("  wavelengths used  %u (serving every lightpath needs at least %u)\n",
		       a->wavelengths_used, a->lower_bound);
	} else {
		printf("  wavelengths used  %u (lower bound %u, gap %lld)%s\n", a->wavelengths_used,
		       a->lower_bound, (long long)a->gap, a->optimal ? ": optimal" : "");
	}
	if (!isnan(a->relaxation))
		printf("  LP relaxation     %.3f wavelengths\n", a->relaxation);
	if (a->time_limit_hit)
		printf("  time limit        reached: lp_solve stopped before proving the answer\n");
	if (!max_served)
		printf("  fits in %-8u  %s\n", a->wavelengths,
		       a->fits ? "yes" : "no: more wavelengths than the ring has");
	printf("  max load          %llu lightpaths on one segment in one direction\n",
	       (unsigned long long)a->max_load);
	printf("  solved in         %.3f s (%u ILP model%s)\n", a->seconds, a->ilp_solves,
	       a->ilp_solves == 1 ? "" : "s");
	printf("  verified          %s\n", a->verified ? "yes" : "NO");
	if (!list)
		return;
	printf("  src    dst    dir  fibre  wavelength\n");
	for (size_t i = 0; i < a->n_lightpaths; i++) {
		const Ofc__V1__RwaLightpath *l = a->lightpaths[i];

		printf("  %-5u  %-5u  %-3s  %-5u  %u\n", l->src, l->dst, l->direction, l->fibre,
		       l->wavelength);
	}
}

/* `ofc rwa` as asked. */
struct rwa_cmd {
	struct rwa_ring ring;
	struct rwa_opts o;
	const char *pattern, *file, *engine, *objective;
	int all_to_all;
	bool json, list;
};

static const struct opt_choice patterns[] = {{"all-to-all", 1}, {NULL}};
static const struct opt_choice engines[] = {
    {"heuristic", RWA_ENGINE_HEURISTIC}, {"ilp", RWA_ENGINE_ILP}, {"lp", RWA_ENGINE_LP}, {NULL}};
static const struct opt_choice objectives[] = {
    {"min-wavelengths", RWA_MIN_WAVELENGTHS}, {"max-served", RWA_MAX_SERVED}, {NULL}};

#define O(f) offsetof(struct rwa_cmd, f)
static const struct opt rwa_table[] = {
    {"nodes", cli_row_u32, O(ring.nodes), "N", "ring nodes", 2, SCHED_MAX_NODES,
     "node ids in a schedule are 16 bits", OPT_REQUIRED, 'n'},
    {"wavelengths", cli_row_u32, O(ring.wavelengths), "W", "wavelengths per fibre", 1, 65535,
     .flags = OPT_REQUIRED, .letter = 'w'},
    {"fibres", cli_row_u32, O(ring.fibres), "F", "fibres per direction (default 1)", 1, 255,
     .letter = 'F'},
    {"pattern", cli_row_choice, O(all_to_all), "all-to-all",
     "one lightpath from every node to every other", .expect = "all-to-all", .letter = 'p',
     .choices = patterns, .alt = 1, .flags = OPT_REQUIRED},
    {"demands", opt_str, O(file), "FILE",
     "one demand per line: SRC DST [COUNT] [cw|ccw|any] ('#' starts a comment)", .letter = 'd',
     .alt = 1},
    {"engine", cli_row_choice, O(o.engine), "heuristic|ilp|lp",
     "heuristic (default), ilp (exact, lp_solve) or lp (the relaxation as a lower bound, "
     "with the heuristic's assignment)",
     .expect = "heuristic, ilp or lp", .letter = 'e', .choices = engines},
    {"objective", cli_row_choice, O(o.objective), "min-wavelengths|max-served",
     "min-wavelengths (default) or max-served (within W)",
     .expect = "min-wavelengths or max-served", .letter = 'O', .choices = objectives},
    {"time-limit", cli_row_duration, O(o.time_limit), "S",
     "the solver's limit for ilp and lp, e.g. 60s (default 60s)", 1e-9, 86400,
     "must be more than 0 and at most a day", .letter = 't'},
    {"lp-solver", cli_row_lp_solver, O(o.lp_solver), "lpsolve|clp",
     "the relaxation's solver: lpsolve (default) or clp (the ilp engine's exact model is "
     "lp_solve's)"},
    {"json", NULL, O(json), NULL, "the result as JSON, with every lightpath", .letter = 'j'},
    {"lightpaths", NULL, O(list), NULL, "list every lightpath in the text output too",
     .letter = 'l'},
    CLI_OPT_HELP,
    {NULL},
};
#undef O

const struct cli_table rwa_cli_table = {"rwa", rwa_table, sizeof(struct rwa_cmd)};

static const struct cli_opts rwa_opts = {
    rwa_table,
    "Exit status 1 when the assignment (min-wavelengths) needs more wavelengths than\n"
    "the ring has; the result is printed all the same.\n",
};

static const char *choice_name(const struct opt_choice *c, int value)
{
	for (; c->name; c++)
		if (c->value == value)
			return c->name;
	return "?";
}

/* Options into q; returns -1 to go on, else the exit status. */
static int parse_options(const struct cli_cmd *cmd, int argc, char **argv, struct rwa_cmd *q)
{
	int first, rc;

	if (!cli_parse(cmd, &rwa_opts, argc, argv, q, &first, &rc))
		return rc;
	if (first < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
	if (!q->ring.nodes)
		return cli_usage_error(cmd, "missing --nodes");
	if (!q->ring.wavelengths)
		return cli_usage_error(cmd, "missing --wavelengths");
	if (!q->all_to_all == !q->file)
		return cli_usage_error(cmd,
				       "give --pattern all-to-all or --demands FILE (one of them)");
	q->pattern = q->all_to_all ? "all-to-all" : NULL;
	q->engine = choice_name(engines, (int)q->o.engine);
	q->objective = choice_name(objectives, (int)q->o.objective);
	return -1;
}

int cmd_rwa(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct rwa_cmd q = {.ring = {0, 0, 1},
			    .o = {RWA_ENGINE_HEURISTIC, RWA_MIN_WAVELENGTHS, 60}};
	struct ofc_error err = {0};
	int rc = parse_options(cmd, argc, argv, &q);

	if (rc >= 0)
		return rc;
	struct rwa_demand *dem = NULL;
	size_t ndem = 0;
	if (q.pattern) {
		if ((uint64_t)q.ring.nodes * (q.ring.nodes - 1) > RWA_MAX_DEMANDS)
			return cli_usage_error(
			    cmd, "all-to-all on %u nodes is %llu lightpaths (limit %u)",
			    q.ring.nodes, (unsigned long long)q.ring.nodes * (q.ring.nodes - 1),
			    RWA_MAX_DEMANDS);
		rwa_all_to_all(q.ring.nodes, &dem, &ndem);
	} else if (rwa_load_demands(q.file, q.ring.nodes, &dem, &ndem, &err) < 0) {
		return cli_fail(&err);
	}
	struct rwa_solution sol = {0};
	struct rwa_report rep;
	if (rwa_solve(&q.ring, dem, ndem, &q.o, &sol, &rep, &err) < 0) {
		free(dem);
		rwa_solution_free(&sol);
		return cli_fail(&err);
	}
	bool verified =
	    rwa_check(&q.ring, dem, ndem, &sol, q.o.objective == RWA_MAX_SERVED, &err) == 0;
	Ofc__V1__RwaAnswer a;
	rwa_answer(&a, &q.ring, dem, ndem, &sol, &rep, q.engine, q.objective,
		   q.pattern ? q.pattern : q.file, verified);
	if (q.json) {
		struct json_writer w;

		jw_init(&w, stdout, true);
		pb_write_json(&w, &a.base);
		jw_finish(&w);
	} else {
		write_text(&a, q.list);
	}
	rwa_answer_free(&a);
	rc = 0;
	if (!verified) {
		fprintf(stderr, "ofc rwa: the assignment failed its check: %s\n", err.msg);
		rc = 1;
	} else if (q.o.objective == RWA_MIN_WAVELENGTHS && !rep.fits) {
		/* The answer cannot be lit on this ring: a script must not take
		 * it for a plan. The ilp engine has proven no assignment fits
		 * (unless its time limit cut it short); the others only found none. */
		fprintf(stderr,
			"ofc rwa: does not fit: %u wavelength%s per fibre needed, the ring has "
			"%u%s\n",
			rep.wavelengths_used, rep.wavelengths_used == 1 ? "" : "s",
			q.ring.wavelengths,
			q.o.engine == RWA_ENGINE_ILP && rep.optimal ? "" : " (not proven optimal)");
		rc = 1;
	}
	free(dem);
	rwa_solution_free(&sol);
	return rc;
}
