/* The LP solvers by name, and whether one can be used (Clp: its plugin
 * loads): what an option naming a solver is checked against before any
 * work. Apart from the wrapper (lp.c) so that a program that checks
 * names (ofcd's --lp-solver) links no solver and no engine with them
 * (scripts/check-engines.py, LOOKUPS). */
#include "rwa/lp_clp.h"
#include "rwa/rwa.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

const char *lp_solver_name(enum lp_solver s)
{
	return s == LP_SOLVER_CLP ? "clp" : s == LP_SOLVER_LPSOLVE ? "lpsolve" : "default";
}

int lp_solver_parse(const char *name, enum lp_solver *s)
{
	if (strcmp(name, "lpsolve") == 0)
		*s = LP_SOLVER_LPSOLVE;
	else if (strcmp(name, "clp") == 0)
		*s = LP_SOLVER_CLP;
	else
		return -1;
	return 0;
}

/* A plugin that loads but is not this build's (an old libofc-clp.so
 * beside a new ofc, a stale build tree) is refused, and every model whose
 * default is Clp then runs on lp_solve: slower, on other pivots, and
 * nothing in the answer says why. So this is said on stderr, the one
 * thing here that prints, since a default's fallback hands no error back
 * to a caller that could; once per process, as models are made by the
 * hundred. The flag is the only state kept: set once, never reset. */
static atomic_flag refused_said = ATOMIC_FLAG_INIT;

static void say_refused(const char *why)
{
	if (!atomic_flag_test_and_set(&refused_said))
		fprintf(stderr, "warning: %s: models that default to Clp run on lp_solve\n", why);
}

const struct clp_api *lp_clp_load(struct ofc_error *err)
{
	static const struct plugin_spec clp = {
	    .what = "the Clp LP solver",
	    .kind = "Clp",
	    .file = OFC_CLP_PLUGIN,
	    .env = "OFC_CLP_PLUGIN",
	    .symbol = OFC_CLP_API,
	    .size = sizeof(struct clp_api),
	    .refused = say_refused,
	};

	return plugin_load(&clp, err);
}

bool lp_solver_available(enum lp_solver s, struct ofc_error *err)
{
	return s != LP_SOLVER_CLP || lp_clp_load(err) != NULL;
}
