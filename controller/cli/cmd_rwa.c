/* ofc rwa: routing and wavelength assignment for a demand set on a ring. */
#include "controller/cli/internal.h"
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

static void write_json(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
		       const struct rwa_solution *sol, const struct rwa_report *rep,
		       const char *engine, const char *objective, const char *source, bool verified)
{
	struct json_writer w;

	jw_init(&w, stdout, true);
	jw_obj_begin(&w);
	jw_key(&w, "engine");
	jw_str(&w, engine);
	jw_key(&w, "objective");
	jw_str(&w, objective);
	jw_key(&w, "method");
	jw_str(&w, rep->method);
	jw_key(&w, "nodes");
	jw_uint(&w, ring->nodes);
	jw_key(&w, "wavelengths");
	jw_uint(&w, ring->wavelengths);
	jw_key(&w, "fibres");
	jw_uint(&w, ring->fibres);
	jw_key(&w, "demands_from");
	jw_str(&w, source);
	jw_key(&w, "demands");
	jw_uint(&w, ndem);
	jw_key(&w, "lightpaths_demanded");
	jw_uint(&w, rep->demanded);
	jw_key(&w, "lightpaths_served");
	jw_uint(&w, rep->served);
	jw_key(&w, "served_upper_bound");
	jw_uint(&w, rep->served_bound);
	jw_key(&w, "wavelengths_used");
	jw_uint(&w, rep->wavelengths_used);
	jw_key(&w, "lower_bound");
	jw_uint(&w, rep->lower_bound);
	/* The gap of what was optimised: wavelengths, or lightpaths served. */
	jw_key(&w, "gap");
	if (strcmp(objective, "max-served") == 0)
		jw_int(&w, (int64_t)rep->served_bound - (int64_t)rep->served);
	else
		jw_int(&w, (int64_t)rep->wavelengths_used - (int64_t)rep->lower_bound);
	jw_key(&w, "gap_unit");
	jw_str(&w, strcmp(objective, "max-served") == 0 ? "lightpaths" : "wavelengths");
	jw_key(&w, "relaxation");
	jw_double(&w, rep->relaxation);
	jw_key(&w, "max_load");
	jw_uint(&w, rwa_solution_max_load(ring, dem, ndem, sol));
	jw_key(&w, "optimal");
	jw_bool(&w, rep->optimal);
	jw_key(&w, "time_limit_hit");
	jw_bool(&w, rep->time_limit_hit);
	jw_key(&w, "fits");
	jw_bool(&w, rep->fits);
	jw_key(&w, "ilp_solves");
	jw_uint(&w, rep->ilp_solves);
	jw_key(&w, "seconds");
	jw_double(&w, rep->seconds);
	jw_key(&w, "verified");
	jw_bool(&w, verified);
	jw_key(&w, "lightpaths");
	jw_arr_begin(&w);
	for (size_t i = 0; i < sol->nruns; i++) {
		const struct rwa_run *r = &sol->runs[i];

		for (uint32_t c = r->colour; c < r->colour + r->count; c++) {
			jw_obj_begin(&w);
			jw_key(&w, "src");
			jw_uint(&w, dem[r->id].src);
			jw_key(&w, "dst");
			jw_uint(&w, dem[r->id].dst);
			jw_key(&w, "direction");
			jw_str(&w, r->dir == RWA_CW ? "cw" : "ccw");
			jw_key(&w, "fibre");
			jw_uint(&w, c % ring->fibres);
			jw_key(&w, "wavelength");
			jw_uint(&w, c / ring->fibres);
			jw_obj_end(&w);
		}
	}
	jw_arr_end(&w);
	jw_obj_end(&w);
	jw_finish(&w);
}

static void write_text(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
		       const struct rwa_solution *sol, const struct rwa_report *rep,
		       const char *engine, bool max_served, const char *source, bool verified,
		       bool list)
{
	printf("RWA on a %u-node ring, %u wavelength%s x %u fibre%s per direction: %zu demand%s, "
	       "%llu lightpaths (%s)\n",
	       ring->nodes, ring->wavelengths, ring->wavelengths == 1 ? "" : "s", ring->fibres,
	       ring->fibres == 1 ? "" : "s", ndem, ndem == 1 ? "" : "s",
	       (unsigned long long)rep->demanded, source);
	printf("  engine            %s: %s\n", engine, rep->method);
	if (max_served) {
		printf("  served            %llu of %llu lightpaths within %u wavelengths "
		       "(upper bound %llu, gap %llu)%s\n",
		       (unsigned long long)rep->served, (unsigned long long)rep->demanded,
		       ring->wavelengths, (unsigned long long)rep->served_bound,
		       (unsigned long long)(rep->served_bound - rep->served),
		       rep->optimal ? ": optimal" : "");
	}
	if (max_served)
		printf("  wavelengths used  %u (serving every lightpath needs at least %u)\n",
		       rep->wavelengths_used, rep->lower_bound);
	else
		printf("  wavelengths used  %u (lower bound %u, gap %lld)%s\n",
		       rep->wavelengths_used, rep->lower_bound,
		       (long long)rep->wavelengths_used - (long long)rep->lower_bound,
		       rep->optimal ? ": optimal" : "");
	if (!isnan(rep->relaxation))
		printf("  LP relaxation     %.3f wavelengths\n", rep->relaxation);
	if (rep->time_limit_hit)
		printf("  time limit        reached: lp_solve stopped before proving the answer\n");
	if (!max_served)
		printf("  fits in %-8u  %s\n", ring->wavelengths,
		       rep->fits ? "yes" : "no: more wavelengths than the ring has");
	printf("  max load          %llu lightpaths on one segment in one direction\n",
	       (unsigned long long)rwa_solution_max_load(ring, dem, ndem, sol));
	printf("  solved in         %.3f s (%u ILP model%s)\n", rep->seconds, rep->ilp_solves,
	       rep->ilp_solves == 1 ? "" : "s");
	printf("  verified          %s\n", verified ? "yes" : "NO");
	if (!list)
		return;
	printf("  src    dst    dir  fibre  wavelength\n");
	for (size_t i = 0; i < sol->nruns; i++) {
		const struct rwa_run *r = &sol->runs[i];

		for (uint32_t c = r->colour; c < r->colour + r->count; c++)
			printf("  %-5u  %-5u  %-3s  %-5u  %u\n", dem[r->id].src, dem[r->id].dst,
			       r->dir == RWA_CW ? "cw" : "ccw", c % ring->fibres, c / ring->fibres);
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
	const char *source = q.pattern ? q.pattern : q.file;
	if (q.json)
		write_json(&q.ring, dem, ndem, &sol, &rep, q.engine, q.objective, source, verified);
	else
		write_text(&q.ring, dem, ndem, &sol, &rep, q.engine,
			   q.o.objective == RWA_MAX_SERVED, source, verified, q.list);
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
