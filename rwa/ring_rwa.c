/* RWA for a demand set on a ring: the three engines, the checker and the
 * bounds.
 *
 *  heuristic  shift-invariant sets (all-to-all) by tilings (circulant.c);
 *             others routed shortest-way (ties alternate directions) and
 *             coloured per direction by rwa_color_circle().
 *  lp         the LP relaxation (ring_ilp.c) as the lower bound, with the
 *             heuristic's assignment to measure the gap against.
 *  ilp        min wavelengths: the heuristic gives an upper bound U and the
 *             relaxation a lower bound L; the exact model is solved for
 *             C = L, L+1, ... U-1 wavelengths, and the first feasible C is
 *             optimal because every smaller one was proven infeasible (or
 *             below the bound). max served: one model, W wavelengths.
 */
#include "rwa/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* LP sizes the heuristic solves by itself for a sharper bound. */
#define HEURISTIC_LP_MAX_DEMANDS 20000u

/* Bounds are compared with a little slack for the LP's rounding. */
static uint32_t ceil_eps(double v)
{
	double c = ceil(v - 1e-6);

	return c < 0 ? 0 : (uint32_t)c;
}

static int check_demands(const struct rwa_ring *r, const struct rwa_demand *dem, size_t ndem,
			 struct ofc_error *err)
{
	if (r->nodes < 2 || r->wavelengths < 1 || r->fibres < 1)
		return ofc_error_set(err, OFC_E_INPUT,
				     "a ring needs 2 or more nodes, 1 or more "
				     "wavelengths and fibres");
	for (size_t i = 0; i < ndem; i++) {
		const struct rwa_demand *d = &dem[i];

		if (d->src >= r->nodes || d->dst >= r->nodes)
			return ofc_error_set(err, OFC_E_INPUT,
					     "demand %zu: node out of range (%u nodes)", i + 1,
					     r->nodes);
		if (d->src == d->dst)
			return ofc_error_set(err, OFC_E_INPUT, "demand %zu: %u to itself", i + 1,
					     d->src);
		if (d->count == 0 || d->dir > RWA_CCW)
			return ofc_error_set(err, OFC_E_INPUT, "demand %zu: bad count or direction",
					     i + 1);
	}
	return 0;
}

uint32_t rwa_combinatorial_bound(const struct rwa_ring *ring, const struct rwa_demand *dem,
				 size_t ndem)
{
	uint32_t n = ring->nodes, F = ring->fibres;
	uint64_t dist = 0, best = 0;
	uint64_t *add = xcalloc(n, sizeof(uint64_t)), *drop = xcalloc(n, sizeof(uint64_t));
	struct rwa_load fixed; /* demands whose direction is given */

	rwa_load_init(&fixed, n);

	for (size_t i = 0; i < ndem; i++) {
		const struct rwa_demand *d = &dem[i];
		uint32_t cw = rwa_arc_len(n, d->src, d->dst, RWA_CW), ccw = n - cw;

		add[d->src] += d->count;
		drop[d->dst] += d->count;
		if (d->dir == RWA_ANY) {
			dist += (uint64_t)d->count * (cw < ccw ? cw : ccw);
			continue;
		}
		dist += (uint64_t)d->count * (d->dir == RWA_CW ? cw : ccw);
		rwa_load_add(&fixed, d->src, d->dst, d->dir, d->count);
	}
	/* Every lightpath uses its length in segment-directions; there are 2N
	 * of them with F channels each per wavelength. */
	best = ceil_div_u64(dist, (uint64_t)2 * n * F);
	for (uint32_t u = 0; u < n; u++) {
		/* A node adds at most 2F lightpaths per wavelength (F fibres, 2 ways). */
		uint64_t a = add[u] > drop[u] ? add[u] : drop[u];

		if (ceil_div_u64(a, (uint64_t)2 * F) > best)
			best = ceil_div_u64(a, (uint64_t)2 * F);
	}
	/* The busiest segment of the fixed routes, over its F fibres. */
	if (ceil_div_u64(rwa_load_max(&fixed), F) > best)
		best = ceil_div_u64(rwa_load_max(&fixed), F);
	free(add);
	free(drop);
	rwa_load_free(&fixed);
	return (uint32_t)best;
}

/* ---- heuristic ---------------------------------------------------------------- */

/* A shift-invariant set (every node, the same offsets, one lightpath each,
 * free direction)? Then ofs gets the offsets and map[u * nofs + j] the
 * demand index of (u, u + ofs[j]). */
static bool circulant_shape(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
			    uint32_t **ofs_out, uint32_t *nofs_out, uint32_t **map_out)
{
	uint32_t n = ring->nodes;

	if (ndem == 0 || ndem % n || n > 8192)
		return false;
	uint32_t *per = xcalloc(n, sizeof(uint32_t));
	for (size_t i = 0; i < ndem; i++) {
		if (dem[i].count != 1 || dem[i].dir != RWA_ANY) {
			free(per);
			return false;
		}
		per[(dem[i].dst + n - dem[i].src) % n]++;
	}
	uint32_t nofs = 0, *ofs = xmalloc((size_t)n * sizeof(uint32_t));
	uint32_t *slot = xmalloc((size_t)n * sizeof(uint32_t));
	bool ok = true;
	for (uint32_t d = 1; d < n; d++) {
		if (per[d] && per[d] != n)
			ok = false;
		slot[d] = nofs;
		if (per[d])
			ofs[nofs++] = d;
	}
	uint32_t *map = NULL;
	if (ok) {
		map = xmalloc((size_t)n * nofs * sizeof(uint32_t));
		memset(map, 0xff, (size_t)n * nofs * sizeof(uint32_t));
		for (size_t i = 0; i < ndem && ok; i++) {
			uint32_t k = dem[i].src * nofs + slot[(dem[i].dst + n - dem[i].src) % n];

			if (map[k] != UINT32_MAX)
				ok = false; /* a duplicate: not one per (node, offset) */
			map[k] = (uint32_t)i;
		}
	}
	free(per);
	free(slot);
	if (!ok) {
		free(ofs);
		free(map);
		return false;
	}
	*ofs_out = ofs;
	*nofs_out = nofs;
	*map_out = map;
	return true;
}

static int cmp_run_id(const void *a, const void *b)
{
	const struct rwa_run *x = a, *y = b;

	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	return (x->colour > y->colour) - (x->colour < y->colour);
}

static const char *heuristic(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
			     struct rwa_solution *sol)
{
	uint32_t n = ring->nodes, *ofs, nofs, *map;

	if (circulant_shape(ring, dem, ndem, &ofs, &nofs, &map)) {
		rwa_circulant(n, ofs, nofs, sol);
		for (size_t i = 0; i < sol->nruns; i++)
			sol->runs[i].id = map[sol->runs[i].id];
		qsort(sol->runs, sol->nruns, sizeof(*sol->runs), cmp_run_id);
		free(ofs);
		free(map);
		return "shortest routes, circulant tiling";
	}

	/* Route: the shorter way; ties alternate so the two directions share
	 * them. A demand may split between directions (one arc per part). */
	struct rwa_arc *arcs[3];
	size_t narcs[3] = {0};
	uint64_t ties = 0;
	arcs[RWA_CW] = xmalloc((ndem + 1) * sizeof(struct rwa_arc));
	arcs[RWA_CCW] = xmalloc((ndem + 1) * sizeof(struct rwa_arc));
	for (size_t i = 0; i < ndem; i++) {
		const struct rwa_demand *d = &dem[i];
		uint32_t cw = rwa_arc_len(n, d->src, d->dst, RWA_CW), c[3] = {0};

		if (d->dir != RWA_ANY) {
			c[d->dir] = d->count;
		} else if (cw * 2 != n) {
			c[cw * 2 < n ? RWA_CW : RWA_CCW] = d->count;
		} else {
			c[RWA_CW] = (uint32_t)((d->count + (ties & 1)) / 2);
			c[RWA_CCW] = d->count - c[RWA_CW];
			ties += d->count;
		}
		for (int r = 1; r <= 2; r++)
			if (c[r])
				arcs[r][narcs[r]++] = (struct rwa_arc){
				    rwa_arc_start(n, d->src, d->dst, r),
				    rwa_arc_len(n, d->src, d->dst, r), c[r], (uint32_t)i};
	}
	for (int r = 1; r <= 2; r++) {
		rwa_color_circle(n, arcs[r], narcs[r], r, sol);
		free(arcs[r]);
	}
	qsort(sol->runs, sol->nruns, sizeof(*sol->runs), cmp_run_id);
	return "shortest routes, cut-and-sweep / first-fit by length";
}

/* ---- checking ------------------------------------------------------------------ */

struct lp_unit {
	uint64_t key; /* dir, colour, start */
	uint32_t len, id;
};

static int cmp_unit(const void *a, const void *b)
{
	const struct lp_unit *x = a, *y = b;

	return (x->key > y->key) - (x->key < y->key);
}

int rwa_check(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
	      const struct rwa_solution *sol, bool max_served, struct ofc_error *err)
{
	uint32_t n = ring->nodes;
	uint64_t *got = xcalloc(ndem + 1, sizeof(uint64_t)), units = 0;
	int rc = 0;

	for (size_t i = 0; i < sol->nruns; i++) {
		const struct rwa_run *r = &sol->runs[i];

		if (r->id >= ndem || (r->dir != RWA_CW && r->dir != RWA_CCW)) {
			rc = ofc_error_set(err, OFC_E_RUNTIME, "run %zu: bad demand or direction",
					   i);
			goto out;
		}
		if (dem[r->id].dir != RWA_ANY && dem[r->id].dir != r->dir) {
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "demand %u routed against its fixed direction",
					   r->id + 1);
			goto out;
		}
		got[r->id] += r->count;
		units += r->count;
	}
	for (size_t d = 0; d < ndem; d++)
		if (max_served ? got[d] > dem[d].count : got[d] != dem[d].count) {
			rc = ofc_error_set(err, OFC_E_RUNTIME,
					   "demand %zu (%u -> %u) has %llu lightpaths, wants %u",
					   d + 1, dem[d].src, dem[d].dst,
					   (unsigned long long)got[d], dem[d].count);
			goto out;
		}
	struct lp_unit *u = xmalloc((units + 1) * sizeof(*u));
	size_t k = 0;
	for (size_t i = 0; i < sol->nruns; i++) {
		const struct rwa_run *r = &sol->runs[i];
		const struct rwa_demand *d = &dem[r->id];

		for (uint32_t c = 0; c < r->count; c++)
			u[k++] = (struct lp_unit){(uint64_t)r->dir << 62 |
						      (uint64_t)(r->colour + c) << 24 |
						      rwa_arc_start(n, d->src, d->dst, r->dir),
						  rwa_arc_len(n, d->src, d->dst, r->dir), r->id};
	}
	qsort(u, k, sizeof(*u), cmp_unit);
	for (size_t i = 0; i < k && rc == 0; i++) {
		uint64_t ch = u[i].key >> 24;
		size_t j = i;

		/* One channel: starts ascending; each arc must end before the
		 * next starts, and the last may not wrap onto the first. */
		while (j + 1 < k && u[j + 1].key >> 24 == ch)
			j++;
		for (size_t a = i; a <= j && rc == 0; a++) {
			uint32_t s = (uint32_t)(u[a].key & 0xffffff), e = s + u[a].len;
			uint32_t ns = a < j ? (uint32_t)(u[a + 1].key & 0xffffff)
					    : (uint32_t)(u[i].key & 0xffffff) + n;

			if (e > ns)
				rc = ofc_error_set(
				    err, OFC_E_RUNTIME,
				    "demands %u and %u share segment %u on %s "
				    "colour %u",
				    u[a].id + 1, a < j ? u[a + 1].id + 1 : u[i].id + 1,
				    (a < j ? ns : ns - n) % n, (ch >> 38) == RWA_CW ? "cw" : "ccw",
				    (uint32_t)(ch & 0x3fffffffffull));
		}
		i = j;
	}
	free(u);
out:
	free(got);
	return rc;
}

void rwa_load_init(struct rwa_load *l, uint32_t n)
{
	l->n = n;
	l->f = xcalloc((size_t)2 * (n + 1), sizeof(int64_t));
}

void rwa_load_add(struct rwa_load *l, uint32_t src, uint32_t dst, enum rwa_dir dir, int64_t count)
{
	uint32_t n = l->n, s = rwa_arc_start(n, src, dst, dir), len = rwa_arc_len(n, src, dst, dir);
	int64_t *g = l->f + (dir == RWA_CW ? 0 : n + 1);

	g[s] += count;
	if (s + len <= n) {
		g[s + len] -= count;
	} else { /* wraps past segment n-1 */
		g[n] -= count;
		g[0] += count;
		g[s + len - n] -= count;
	}
}

uint64_t rwa_load_max(const struct rwa_load *l)
{
	int64_t best = 0;

	for (int r = 0; r < 2; r++) {
		int64_t run = 0;

		for (uint32_t x = 0; x < l->n; x++) {
			run += l->f[r * (l->n + 1) + x];
			if (run > best)
				best = run;
		}
	}
	return (uint64_t)best;
}

void rwa_load_free(struct rwa_load *l)
{
	free(l->f);
	l->f = NULL;
}

uint64_t rwa_solution_max_load(const struct rwa_ring *ring, const struct rwa_demand *dem,
			       size_t ndem, const struct rwa_solution *sol)
{
	struct rwa_load l;
	uint64_t best;

	(void)ndem;
	rwa_load_init(&l, ring->nodes);
	for (size_t i = 0; i < sol->nruns; i++) {
		const struct rwa_run *r = &sol->runs[i];

		rwa_load_add(&l, dem[r->id].src, dem[r->id].dst, r->dir, r->count);
	}
	best = rwa_load_max(&l);
	rwa_load_free(&l);
	return best;
}

/* ---- the engines ------------------------------------------------------------------ */

static uint32_t wavelengths_of(const struct rwa_ring *r, const struct rwa_solution *sol)
{
	uint32_t c = sol->colours[RWA_CW] > sol->colours[RWA_CCW] ? sol->colours[RWA_CW]
								  : sol->colours[RWA_CCW];

	return (c + r->fibres - 1) / r->fibres;
}

/* Keep only lightpaths on channels within W (max-served from a colouring). */
static uint64_t clip(const struct rwa_ring *r, struct rwa_solution *sol)
{
	uint32_t lim = r->fibres * r->wavelengths;
	uint64_t served = 0;
	size_t k = 0;

	sol->colours[RWA_CW] = sol->colours[RWA_CCW] = 0;
	for (size_t i = 0; i < sol->nruns; i++) {
		struct rwa_run x = sol->runs[i];

		if (x.colour >= lim)
			continue;
		if (x.colour + x.count > lim)
			x.count = lim - x.colour;
		sol->runs[k++] = x;
		served += x.count;
		if (x.colour + x.count > sol->colours[x.dir])
			sol->colours[x.dir] = x.colour + x.count;
	}
	sol->nruns = k;
	return served;
}

static double remaining(double limit, double t0)
{
	if (limit <= 0)
		return 0;
	double left = limit - (now_seconds() - t0);
	return left < 0.001 ? 0.001 : left;
}

const char *rwa_engine_name(enum rwa_engine e)
{
	return e == RWA_ENGINE_ILP ? "ilp" : e == RWA_ENGINE_LP ? "lp" : "heuristic";
}

int rwa_solve(const struct rwa_ring *ring, const struct rwa_demand *dem, size_t ndem,
	      const struct rwa_opts *opts, struct rwa_solution *sol, struct rwa_report *rep,
	      struct ofc_error *err)
{
	double t0 = now_seconds(), relax = NAN;
	bool max_served = opts->objective == RWA_MAX_SERVED;
	uint64_t demanded = 0;
	enum lp_result res;

	memset(rep, 0, sizeof(*rep));
	rep->relaxation = NAN;
	if (check_demands(ring, dem, ndem, err) < 0)
		return -1;
	for (size_t i = 0; i < ndem; i++)
		demanded += dem[i].count;
	rep->demanded = demanded;
	rwa_solution_reset(sol);
	rep->method = heuristic(ring, dem, ndem, sol);
	rep->lower_bound = rwa_combinatorial_bound(ring, dem, ndem);
	rep->served_bound = demanded;

	bool want_lp = opts->engine != RWA_ENGINE_HEURISTIC || ndem <= HEURISTIC_LP_MAX_DEMANDS;
	if (want_lp) {
		res = rwa_lp_relax(ring, dem, ndem, max_served, remaining(opts->time_limit, t0),
				   opts->lp_solver, &relax, err);
		if (res == LP_FAILED)
			return -1;
		if (res == LP_TIMEOUT || res == LP_FEASIBLE)
			rep->time_limit_hit = true;
		if (res == LP_OPTIMAL) {
			if (max_served) {
				rep->served_bound = (uint64_t)floor(relax + 1e-6);
			} else {
				rep->relaxation = relax / ring->fibres;
				if (ceil_eps(rep->relaxation) > rep->lower_bound)
					rep->lower_bound = ceil_eps(rep->relaxation);
			}
		}
	}
	if (opts->engine == RWA_ENGINE_ILP) {
		uint32_t c = max_served ? ring->wavelengths : wavelengths_of(ring, sol);
		uint64_t cols = (uint64_t)2 * ndem * ring->fibres * (c ? c : 1);

		if (cols > RWA_ILP_MAX_COLUMNS)
			return ofc_error_set(
			    err, OFC_E_INPUT,
			    "the exact model would have %llu columns (limit %u): use "
			    "--engine heuristic or lp",
			    (unsigned long long)cols, RWA_ILP_MAX_COLUMNS);
	}
	if (max_served && opts->engine == RWA_ENGINE_ILP && !rep->time_limit_hit) {
		struct rwa_solution ilp = {0};
		double obj = 0;

		res = rwa_ilp(ring, dem, ndem, ring->wavelengths, true,
			      remaining(opts->time_limit, t0), &ilp, &obj, err);
		rep->ilp_solves++;
		if (res == LP_FAILED) {
			rwa_solution_free(&ilp);
			return -1;
		}
		if (res == LP_OPTIMAL || res == LP_FEASIBLE) {
			rwa_solution_free(sol);
			*sol = ilp;
			rep->method = "ILP (max lightpaths served within W)";
			rep->optimal = res == LP_OPTIMAL;
			if (rep->optimal)
				rep->served_bound = (uint64_t)floor(obj + 1e-6);
		} else {
			rwa_solution_free(&ilp);
		}
		if (res == LP_FEASIBLE || res == LP_TIMEOUT)
			rep->time_limit_hit = true;
	} else if (!max_served && opts->engine == RWA_ENGINE_ILP && !rep->time_limit_hit) {
		uint32_t ub = wavelengths_of(ring, sol) + (opts->pure_ilp ? 1 : 0);

		for (uint32_t c = rep->lower_bound; c < ub; c++) {
			struct rwa_solution ilp = {0};
			double obj = 0;

			res = rwa_ilp(ring, dem, ndem, c, false, remaining(opts->time_limit, t0),
				      &ilp, &obj, err);
			rep->ilp_solves++;
			if (res == LP_FAILED) {
				rwa_solution_free(&ilp);
				return -1;
			}
			if (res == LP_OPTIMAL || res == LP_FEASIBLE) {
				/* Any feasible point answers "fits in c". */
				rwa_solution_free(sol);
				*sol = ilp;
				rep->method = "ILP (min wavelengths)";
				rep->lower_bound = c;
				break;
			}
			rwa_solution_free(&ilp);
			if (res == LP_TIMEOUT) {
				rep->time_limit_hit = true;
				break;
			}
			/* Infeasible: c + 1 is a lower bound now. */
			rep->lower_bound = c + 1;
			if (c + 1 == ub)
				rep->method = "heuristic assignment, proven optimal by the ILP";
		}
	}
	rep->wavelengths_used = wavelengths_of(ring, sol);
	if (max_served) {
		rep->served = clip(ring, sol);
		if (rep->served == rep->served_bound)
			rep->optimal = true;
		rep->wavelengths_used = wavelengths_of(ring, sol);
	} else {
		rep->served = demanded;
		for (size_t i = 0; i < sol->nruns; i++) {
			const struct rwa_run *x = &sol->runs[i];
			uint32_t lim = ring->fibres * ring->wavelengths;

			if (x->colour + x->count > lim)
				rep->served -=
				    x->colour + x->count - (x->colour > lim ? x->colour : lim);
		}
		rep->optimal = rep->wavelengths_used == rep->lower_bound;
	}
	rep->fits = rep->wavelengths_used <= ring->wavelengths;
	rep->seconds = now_seconds() - t0;
	return 0;
}
