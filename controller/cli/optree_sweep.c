/* ofc optree --sweep: every ring algorithm over a grid of node counts,
 * wavelengths and block sizes, as the OpTree paper's comparisons (Figs. 5
 * and 6: 1024 and 2048 nodes, 4-128 MB, 64/96/128 wavelengths), and with
 * --plot a picture of time against size per algorithm (hand-written SVG,
 * one panel per ring).
 *
 * Each (nodes, wavelengths) ring is one schedule_compute call with --algo
 * all: every schedule built and verified once. A schedule's steps, stages
 * and retunes do not depend on the block size, so the time at size b is
 * Eq. 3 with its own figures: T = S b / B_lambda + R d_mrr + H d_oeo. */
#include "controller/cli/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_MAX 64
#define NALGO	  5

struct sweep {
	uint32_t nodes[SWEEP_MAX], nn;
	uint32_t wl[SWEEP_MAX], nw;
	uint64_t size[SWEEP_MAX];
	uint32_t ns;
};

/* One ring of the grid: per algorithm its figures (steps == 0: not built). */
struct cell {
	uint32_t nodes, wl;
	uint32_t steps[NALGO], stages[NALGO], retunes[NALGO];
	bool verified[NALGO];
	char why[NALGO][520];
};

static const enum optree_algo algos[NALGO] = {OPTREE_RING, OPTREE_NE, OPTREE_ONESTAGE, OPTREE_WRHT,
					      OPTREE_TREE};
static const char *const colour[NALGO] = {"#d62728", "#ff7f0e", "#8c564b", "#1f77b4", "#2ca02c"};

/* "a,b,c" or "a..b" (doubling) of sizes or whole numbers. */
static int parse_list(const struct cli_cmd *cmd, const char *key, const char *v, bool sizes,
		      uint64_t *out, uint32_t *n)
{
	const char *dots = strstr(v, "..");
	const char *why = NULL;
	char buf[64];

	*n = 0;
	if (dots) {
		uint64_t lo, hi;

		if ((size_t)(dots - v) >= sizeof(buf))
			return cli_usage_error(cmd, "bad --sweep %s='%s'", key, v);
		memcpy(buf, v, (size_t)(dots - v));
		buf[dots - v] = 0;
		if ((sizes ? parse_size(buf, &lo, &why) : parse_u64(buf, &lo)) < 0 ||
		    (sizes ? parse_size(dots + 2, &hi, &why) : parse_u64(dots + 2, &hi)) < 0 ||
		    !lo || hi < lo)
			return cli_usage_error(
			    cmd,
			    "bad --sweep %s='%s': expected LO..HI (doubling) or a "
			    "list A,B,C",
			    key, v);
		for (uint64_t x = lo; x <= hi && *n < SWEEP_MAX; x *= 2)
			out[(*n)++] = x;
		return 0;
	}
	for (const char *p = v; *p;) {
		size_t k = strcspn(p, ",");
		uint64_t x;

		if (!k || k >= sizeof(buf) || *n == SWEEP_MAX)
			return cli_usage_error(cmd, "bad --sweep %s='%s'", key, v);
		memcpy(buf, p, k);
		buf[k] = 0;
		if ((sizes ? parse_size(buf, &x, &why) : parse_u64(buf, &x)) < 0 || !x)
			return cli_usage_error(cmd, "bad --sweep %s='%s': '%s' %s", key, v, buf,
					       why ? why : "is not a positive number");
		out[(*n)++] = x;
		p += k + (p[k] == ',');
	}
	return 0;
}

static int parse_sweep(const struct cli_cmd *cmd, char **args, int nargs, struct sweep *sw)
{
	uint64_t v[SWEEP_MAX];
	uint32_t n;

	memset(sw, 0, sizeof(*sw));
	for (int i = 0; i < nargs; i++) {
		const char *eq = strchr(args[i], '=');
		size_t kl = eq ? (size_t)(eq - args[i]) : 0;

		if (!eq)
			return cli_usage_error(cmd, "--sweep takes KEY=VALUES, not '%s'", args[i]);
		if (kl == 5 && strncmp(args[i], "nodes", 5) == 0) {
			if (parse_list(cmd, "nodes", eq + 1, false, v, &n))
				return 2;
			for (uint32_t k = 0; k < n; k++) {
				if (v[k] < 2 || v[k] > OPTREE_MAX_NODES)
					return cli_usage_error(cmd, "bad --sweep nodes: 2..%u",
							       OPTREE_MAX_NODES);
				sw->nodes[k] = (uint32_t)v[k];
			}
			sw->nn = n;
		} else if (kl == 11 && strncmp(args[i], "wavelengths", 11) == 0) {
			if (parse_list(cmd, "wavelengths", eq + 1, false, v, &n))
				return 2;
			for (uint32_t k = 0; k < n; k++) {
				if (v[k] > 65535)
					return cli_usage_error(cmd,
							       "bad --sweep wavelengths: 1..65535");
				sw->wl[k] = (uint32_t)v[k];
			}
			sw->nw = n;
		} else if ((kl == 4 && strncmp(args[i], "size", 4) == 0) ||
			   (kl == 5 && strncmp(args[i], "sizes", 5) == 0)) {
			if (parse_list(cmd, "size", eq + 1, true, sw->size, &sw->ns))
				return 2;
		} else {
			return cli_usage_error(cmd,
					       "unknown --sweep key in '%s' (nodes, wavelengths, "
					       "size)",
					       args[i]);
		}
	}
	return 0;
}

static double time_us(const struct optree_ring *r, const struct cell *c, int a, uint64_t size)
{
	return (double)c->steps[a] * (double)size * 8.0 / r->rate * 1e6 +
	       c->retunes[a] * r->mrr_delay * 1e6 + c->stages[a] * r->oeo_delay * 1e6;
}

/* ---- the picture ------------------------------------------------------------ */

static void svg_panel(FILE *f, double x0, double y0, double w, double h,
		      const struct optree_ring *base, const struct cell *c, const struct sweep *sw,
		      double tmin, double tmax, enum sched_collective coll)
{
	double lx0 = log2((double)sw->size[0]), lx1 = log2((double)sw->size[sw->ns - 1]);
	double ly0 = floor(log10(tmin)), ly1 = ceil(log10(tmax));
	double pl = x0 + 64, pr = x0 + w - 12, pt = y0 + 28, pb = y0 + h - 40;
	struct optree_ring r = *base;
	char sz[32];

	if (lx1 <= lx0)
		lx1 = lx0 + 1;
	if (ly1 <= ly0)
		ly1 = ly0 + 1;
	r.nodes = c->nodes;
	r.wavelengths = c->wl;
	fprintf(f,
		"<g>\n<text x='%.1f' y='%.1f' font-size='13' text-anchor='middle'>%s, N = %u, "
		"W = %u</text>\n",
		x0 + w / 2, y0 + 16, sched_collective_name(coll), c->nodes, c->wl);
	fprintf(f,
		"<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#888'/>\n",
		pl, pt, pr - pl, pb - pt);
	for (double e = ly0; e <= ly1 + 1e-9; e++) {
		double y = pb - (e - ly0) / (ly1 - ly0) * (pb - pt);

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", pl, y,
			pr, y);
		fprintf(
		    f,
		    "<text x='%.1f' y='%.1f' font-size='10' text-anchor='end'>1e%+.0f ms</text>\n",
		    pl - 4, y + 3, e - 3);
	}
	for (uint32_t k = 0; k < sw->ns; k++) {
		double x = pl + (log2((double)sw->size[k]) - lx0) / (lx1 - lx0) * (pr - pl);

		fmt_size(sz, sizeof(sz), sw->size[k]);
		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#eee'/>\n", x, pt,
			x, pb);
		fprintf(f,
			"<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%s</text>\n",
			x, pb + 14, sz);
	}
	fprintf(f,
		"<text x='%.1f' y='%.1f' font-size='11' text-anchor='middle'>block size per "
		"node</text>\n",
		(pl + pr) / 2, pb + 30);
	for (int a = 0; a < NALGO; a++) {
		if (!c->steps[a])
			continue;
		fprintf(f, "<polyline fill='none' stroke='%s' stroke-width='2' points='",
			colour[a]);
		for (uint32_t k = 0; k < sw->ns; k++) {
			double t = time_us(&r, c, a, sw->size[k]);
			double x = pl + (log2((double)sw->size[k]) - lx0) / (lx1 - lx0) * (pr - pl);
			double y = pb - (log10(t) - ly0) / (ly1 - ly0) * (pb - pt);

			fprintf(f, "%.1f,%.1f ", x, y);
		}
		fprintf(f, "'/>\n");
	}
	fprintf(f, "</g>\n");
}

static int write_svg(const char *path, const struct optree_ring *base, const struct cell *cells,
		     uint32_t ncells, const struct sweep *sw, enum sched_collective coll)
{
	struct cli_output out;
	struct ofc_error err = {0};
	uint32_t cols = ncells < 3 ? ncells : 3, rows = (ncells + cols - 1) / cols;
	double pw = 380, ph = 280, W = cols * pw, H = rows * ph + 40;
	double tmin = INFINITY, tmax = 0;

	for (uint32_t i = 0; i < ncells; i++) {
		struct optree_ring r = *base;

		r.nodes = cells[i].nodes;
		r.wavelengths = cells[i].wl;
		for (int a = 0; a < NALGO; a++)
			for (uint32_t k = 0; cells[i].steps[a] && k < sw->ns; k++) {
				double t = time_us(&r, &cells[i], a, sw->size[k]);

				tmin = t < tmin ? t : tmin;
				tmax = t > tmax ? t : tmax;
			}
	}
	if (!(tmax > 0))
		tmin = tmax = 1;
	if (cli_output_open(&out, path, &err) < 0)
		return cli_fail(&err);
	FILE *f = out.f;
	fprintf(f,
		"<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' "
		"width='%.0f' height='%.0f' font-family='sans-serif'>\n",
		W, H);
	fprintf(f, "<rect width='100%%' height='100%%' fill='white'/>\n");
	for (uint32_t i = 0; i < ncells; i++)
		svg_panel(f, (i % cols) * pw, (i / cols) * ph, pw, ph, base, &cells[i], sw, tmin,
			  tmax, coll);
	/* Legend along the bottom. */
	for (int a = 0; a < NALGO; a++) {
		double x = 20 + a * 110, y = rows * ph + 20;

		fprintf(f,
			"<line x1='%.0f' y1='%.0f' x2='%.0f' y2='%.0f' stroke='%s' "
			"stroke-width='3'/>\n",
			x, y, x + 24, y, colour[a]);
		fprintf(f, "<text x='%.0f' y='%.0f' font-size='12'>%s</text>\n", x + 30, y + 4,
			optree_algo_name(algos[a]));
	}
	fprintf(f, "</svg>\n");
	if (cli_output_commit(&out, &err) < 0)
		return cli_fail(&err);
	return 0;
}

/* ---- the table ---------------------------------------------------------------- */

int optree_sweep(const struct cli_cmd *cmd, const struct schedule_query *q0,
		 const struct optree_ring *base, char **args, int nargs, const char *plot)
{
	struct sweep sw;
	int rc = parse_sweep(cmd, args, nargs, &sw);
	double red[NALGO] = {0};
	uint32_t nred[NALGO] = {0};

	if (rc)
		return rc;
	if (!sw.nn)
		sw.nodes[sw.nn++] = base->nodes;
	if (!sw.nw)
		sw.wl[sw.nw++] = base->wavelengths;
	if (!sw.ns)
		sw.size[sw.ns++] = base->block_bytes;
	if (!sw.nodes[0] || !sw.wl[0])
		return cli_usage_error(cmd, "--sweep needs nodes= and wavelengths= (or --nodes and "
					    "--wavelengths)");
	struct cell *cells = xcalloc((size_t)sw.nn * sw.nw, sizeof(*cells));
	uint32_t nc = 0;
	char rate[32], d[32];

	fmt_rate(rate, sizeof(rate), base->rate);
	fmt_duration(d, sizeof(d), base->mrr_delay);
	printf("%s on WDM rings, %u fibre%s per direction, %s per wavelength, %s MRR retuning: "
	       "time in ms\n\n",
	       sched_collective_name(q0->collective), base->fibres, base->fibres == 1 ? "" : "s",
	       rate, d);
	printf("%-6s %-5s %-9s", "nodes", "wl", "size");
	for (int a = 0; a < NALGO; a++)
		printf(" %11s", optree_algo_name(algos[a]));
	for (int a = 0; a < NALGO - 1; a++)
		printf("  %9s", a == 0 ? "optree vs" : "");
	printf("\n%-6s %-5s %-9s", "", "", "");
	for (int a = 0; a < NALGO; a++)
		printf(" %11s", "");
	for (int a = 0; a < NALGO - 1; a++)
		printf("  %9s", optree_algo_name(algos[a]));
	printf("\n");
	for (uint32_t i = 0; i < sw.nn; i++)
		for (uint32_t j = 0; j < sw.nw; j++) {
			struct optree_ring r = *base;
			struct schedule_query q = *q0;
			struct schedule_result res;
			struct ofc_error err = {0};
			struct cell *c = &cells[nc++];

			r.nodes = sw.nodes[i];
			r.wavelengths = sw.wl[j];
			c->nodes = r.nodes;
			c->wl = r.wavelengths;
			q.ring = &r;
			q.algorithm = "all";
			q.no_certify = true; /* the table shows no fluid bound */
			if (schedule_compute(&q, &res, NULL, &err) < 0) {
				free(cells);
				return cli_fail(&err);
			}
			for (uint32_t k = 0; k < res.nout; k++) {
				const struct schedule_outcome *o = &res.out[k];
				int a = 0;

				while (a < NALGO && algos[a] != o->ring.algo)
					a++;
				if (a == NALGO)
					continue;
				if (!o->applies) {
					snprintf(c->why[a], sizeof(c->why[a]), "%s", o->why);
					continue;
				}
				c->steps[a] = o->steps;
				c->stages[a] = o->ring.res.nstages;
				c->retunes[a] = o->ring.tm.retune_stages;
				c->verified[a] = o->verified;
				if (!o->verified)
					rc = 1;
			}
			schedule_result_free(&res);
			for (uint32_t k = 0; k < sw.ns; k++) {
				char sz[32];
				double t[NALGO];

				fmt_size(sz, sizeof(sz), sw.size[k]);
				printf("%-6u %-5u %-9s", c->nodes, c->wl, sz);
				for (int a = 0; a < NALGO; a++) {
					t[a] = c->steps[a] ? time_us(&r, c, a, sw.size[k]) : NAN;
					if (c->steps[a])
						printf(" %11.3f", t[a] / 1000);
					else
						printf(" %11s", "-");
				}
				for (int a = 0; a < NALGO - 1; a++) {
					if (isfinite(t[a]) && isfinite(t[NALGO - 1])) {
						double x = 100.0 * (1 - t[NALGO - 1] / t[a]);

						printf("  %8.2f%%", -x);
						red[a] += x;
						nred[a]++;
					} else {
						printf("  %9s", "-");
					}
				}
				printf("\n");
			}
		}
	printf("\nsteps (verified%s):\n", rc ? "; SOME FAILED" : "");
	for (uint32_t i = 0; i < nc; i++) {
		printf("  N = %u, W = %u:", cells[i].nodes, cells[i].wl);
		for (int a = 0; a < NALGO; a++)
			if (cells[i].steps[a])
				printf(" %s %u%s", optree_algo_name(algos[a]), cells[i].steps[a],
				       cells[i].verified[a] ? "" : " (NOT verified)");
			else
				printf(" %s -", optree_algo_name(algos[a]));
		printf("\n");
	}
	printf("average time change by optree:");
	for (int a = 0; a < NALGO - 1; a++)
		if (nred[a])
			printf(" %+.2f %% vs %s", -red[a] / nred[a], optree_algo_name(algos[a]));
	printf("\n");
	for (uint32_t i = 0; i < nc; i++)
		for (int a = 0; a < NALGO; a++)
			if (!cells[i].steps[a] && cells[i].why[a][0])
				printf("N = %u, W = %u: %s not built: %s\n", cells[i].nodes,
				       cells[i].wl, optree_algo_name(algos[a]), cells[i].why[a]);
	if (plot) {
		int prc = write_svg(plot, base, cells, nc, &sw, q0->collective);

		if (prc)
			rc = prc;
	}
	free(cells);
	return rc;
}
