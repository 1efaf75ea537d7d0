/* ofc rwa: routing and wavelength assignment for a demand set on a ring. */
#include "controller/cli/internal.h"
#include "proto/ring.pb-c.h"
#include "rwa/rwa.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char help[] =
    "  --nodes N            ring nodes\n"
    "  --wavelengths W      wavelengths per fibre\n"
    "  --fibres F           fibres per direction (default 1)\n"
    "  --pattern all-to-all one lightpath from every node to every other\n"
    "  --demands FILE       one demand per line: SRC DST [COUNT] [cw|ccw|any]\n"
    "                       ('#' starts a comment)\n"
    "  --engine E           heuristic (default), ilp (exact, lp_solve) or lp (the\n"
    "                       relaxation as a lower bound, with the heuristic's assignment)\n"
    "  --objective O        min-wavelengths (default) or max-served (within W)\n"
    "  --time-limit S       the solver's limit for ilp and lp, e.g. 60s (default 60s)\n"
    "  --lp-solver S        the relaxation's solver: lpsolve (default) or clp (the\n"
    "                       ilp engine's exact model is lp_solve's)\n"
    "  --json               the result as JSON, with every lightpath\n"
    "  --lightpaths         list every lightpath in the text output too\n\n"
    "Exit status 1 when the assignment (min-wavelengths) needs more wavelengths than\n"
    "the ring has; the result is printed all the same.\n";

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
	bool json, list;
};

/* Options into q; returns -1 to go on, else the exit status. */
static int parse_options(const struct cli_cmd *cmd, int argc, char **argv, struct rwa_cmd *q)
{
	static const struct option opts[] = {
	    {"nodes", required_argument, NULL, 'n'},
	    {"wavelengths", required_argument, NULL, 'w'},
	    {"fibres", required_argument, NULL, 'F'},
	    {"pattern", required_argument, NULL, 'p'},
	    {"demands", required_argument, NULL, 'd'},
	    {"engine", required_argument, NULL, 'e'},
	    {"objective", required_argument, NULL, 'O'},
	    {"time-limit", required_argument, NULL, 't'},
	    {"lp-solver", required_argument, NULL, 'Q'},
	    {"json", no_argument, NULL, 'j'},
	    {"lightpaths", no_argument, NULL, 'l'},
	    {"help", no_argument, NULL, 'h'},
	    {0},
	};
	struct rwa_ring *ring = &q->ring;
	struct rwa_opts *o = &q->o;
	bool have_n = false, have_w = false;
	int c;

	while ((c = cli_getopt(cmd, argc, argv, "n:w:F:p:d:e:O:t:jlh", opts)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'n':
			if (cli_opt_u32(cmd, "nodes", optarg, 2, SCHED_MAX_NODES,
					"node ids in a schedule are 16 bits", &ring->nodes))
				return 2;
			have_n = true;
			break;
		case 'w':
			if (cli_opt_u32(cmd, "wavelengths", optarg, 1, 65535, NULL,
					&ring->wavelengths))
				return 2;
			have_w = true;
			break;
		case 'F':
			if (cli_opt_u32(cmd, "fibres", optarg, 1, 255, NULL, &ring->fibres))
				return 2;
			break;
		case 'p':
			if (strcmp(optarg, "all-to-all") != 0)
				return cli_usage_error(cmd, "unknown --pattern '%s' (all-to-all)",
						       optarg);
			q->pattern = optarg;
			break;
		case 'd':
			q->file = optarg;
			break;
		case 'e':
			q->engine = optarg;
			if (strcmp(optarg, "heuristic") == 0)
				o->engine = RWA_ENGINE_HEURISTIC;
			else if (strcmp(optarg, "ilp") == 0)
				o->engine = RWA_ENGINE_ILP;
			else if (strcmp(optarg, "lp") == 0)
				o->engine = RWA_ENGINE_LP;
			else
				return cli_usage_error(
				    cmd, "unknown --engine '%s' (heuristic, ilp, lp)", optarg);
			break;
		case 'O':
			q->objective = optarg;
			if (strcmp(optarg, "min-wavelengths") == 0)
				o->objective = RWA_MIN_WAVELENGTHS;
			else if (strcmp(optarg, "max-served") == 0)
				o->objective = RWA_MAX_SERVED;
			else
				return cli_usage_error(cmd,
						       "unknown --objective '%s' (min-wavelengths, "
						       "max-served)",
						       optarg);
			break;
		case 't':
			if (cli_opt_duration(cmd, "time-limit", optarg, &o->time_limit))
				return 2;
			if (o->time_limit <= 0 || o->time_limit > 86400)
				return cli_usage_error(cmd,
						       "bad --time-limit '%s': must be more than 0 "
						       "and at most a day",
						       optarg);
			break;
		case 'Q':
			if (lp_solver_parse(optarg, &o->lp_solver) < 0)
				return cli_usage_error(
				    cmd, "--lp-solver is lpsolve or clp, got '%s'", optarg);
			break;
		case 'j':
			q->json = true;
			break;
		case 'l':
			q->list = true;
			break;
		case 'h':
			return cli_help(cmd, help);
		}
	}
	if (optind < argc)
		return cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!have_n)
		return cli_usage_error(cmd, "missing --nodes");
	if (!have_w)
		return cli_usage_error(cmd, "missing --wavelengths");
	if (!q->pattern == !q->file)
		return cli_usage_error(cmd,
				       "give --pattern all-to-all or --demands FILE (one of them)");
	return -1;
}

int cmd_rwa(const struct cli_cmd *cmd, int argc, char **argv)
{
	struct rwa_cmd q = {.ring = {0, 0, 1},
			    .o = {RWA_ENGINE_HEURISTIC, RWA_MIN_WAVELENGTHS, 60},
			    .engine = "heuristic",
			    .objective = "min-wavelengths"};
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
