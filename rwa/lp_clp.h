/* rwa/lp.c's Clp half, private to rwa/: rwa/lp_clp.cc is built
 * into a plugin of its own, libofc-clp.so, which rwa/lp.c loads the first
 * time a model asks for Clp (dlopen, as controller/cli/https.c loads
 * libcurl): linked, Clp and what it pulls in (libstdc++, LAPACK, BLAS,
 * CoinUtils) added 4 MB to the resident memory of every ofc and ofcd run,
 * which the engines' memory estimates count, whether or not an LP ran.
 * The plugin exports one table, OFC_CLP_API, checked by its size. Plain C
 * types only (C++ cannot include rwa.h's <stdatomic.h>); columns and rows
 * 0-based, bounds +-INFINITY for none. solve returns Clp's status: 0
 * optimal, 1 infeasible, 2 unbounded, 3 or 5 stopped (stop() returned
 * nonzero at an iteration), 4 or -1 failed (why[] says why), CLP_INTEGER
 * when integer columns were asked for, which Clp does not solve. */
#ifndef OFC_RWA_LP_CLP_H
#define OFC_RWA_LP_CLP_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct clp;
#define CLP_INTEGER    100
#define OFC_CLP_API    "ofc_clp_api"
#define OFC_CLP_PLUGIN "libofc-clp.so"

struct clp_api {
	size_t size; /* sizeof(struct clp_api): a plugin of another build is refused */
	struct clp *(*create)(int ncols);
	void (*destroy)(struct clp *c);
	int (*nrows)(const struct clp *c);
	int (*add_col)(struct clp *c, double obj, int n, const int *rows, const double *vals);
	int (*add_row)(struct clp *c, int n, const int *cols, const double *vals, double lo,
		       double hi);
	void (*maximize)(struct clp *c, bool maximize);
	void (*set_obj)(struct clp *c, int col, double v);
	void (*set_bounds)(struct clp *c, int col, double lo, double hi);
	void (*set_integer)(struct clp *c);
	/* Clp's scaling modes: 0 none, 1 equilibrium, 2 geometric, 3 automatic */
	void (*set_scaling)(struct clp *c, int mode);
	/* 0: by what changed since the last solve, 1: dual simplex, 2: primal */
	void (*set_algorithm)(struct clp *c, int which);
	void (*reset_basis)(struct clp *c);
	int (*solve)(struct clp *c, int (*stop)(void *), void *ctx, char *why, size_t whylen);
	double (*objective)(const struct clp *c);
	void (*solution)(const struct clp *c, double *x, int n);
	int (*duals)(const struct clp *c, double *y, int n);
	int (*write)(struct clp *c, const char *path);
	/* threads for the pricing inside a solve (rwa/lp_clp_split.h); 1: none */
	void (*set_threads)(struct clp *c, int threads);
	int (*iterations)(const struct clp *c); /* the last solve's */
	/* Clp's maximum iterations per solve (status 3 past them); 0: none */
	void (*set_iteration_limit)(struct clp *c, int iterations);
	/* delete n rows (ascending indices), the basis of the rest kept */
	int (*delete_rows)(struct clp *c, int n, const int *rows);
};

#ifndef __cplusplus
struct ofc_error;
/* Clp's plugin (util/plugin.c), loaded once a process: $OFC_CLP_PLUGIN,
 * else libofc-clp.so beside the program, one folder up or in ../lib/ofc;
 * NULL (err says why) when it cannot be (lp_solver.c). */
const struct clp_api *lp_clp_load(struct ofc_error *err);
#endif

#ifdef __cplusplus
}
#endif

#endif
