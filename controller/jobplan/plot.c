/* --plot FILE: where reconfiguring pays. The iteration time of
 * each way against the switching time per change (every switch's, 1 us to
 * 100 s, log scale) at the workload's sizes, and against the message size
 * (every phase's, 1/64 to 64 times, log scale) at the configured switching;
 * from the prices jobplan_compute made (a schedule's time is its latency part
 * plus its bandwidth part, linear in the size: alpha-beta). An SVG drawn
 * here: two panels, one line per way, the crossovers where the chosen way
 * changes marked. A way's time is its job's over the iterations (the
 * switching before the first spread over them), what the choice weighs. */
#include "controller/jobplan/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NPTS JOBPLAN_SWEEP_POINTS

void jobplan_sweep(const struct jobplan_result *r, bool by_delay, struct jobplan_series *s)
{
	for (int i = 0; i < NPTS; i++) {
		struct jobplan_way w[JOBPLAN_KINDS];
		enum jobplan_kind ck;
		/* delay 1e-6 .. 1e2 s; size 1/64 .. 64 */
		double x = by_delay ? pow(10, -6 + 8.0 * i / (NPTS - 1))
				    : pow(2, -6 + 12.0 * i / (NPTS - 1));

		s->x[i] = x;
		jobplan_ways(r, by_delay ? x : -1, by_delay ? 1 : x, w, &ck);
		double iters = r->workload->iterations ? r->workload->iterations : 1;

		for (int k = 0; k < JOBPLAN_KINDS; k++) {
			/* the job over its iterations: the first switching spread */
			s->y[k][i] = w[k].have ? w[k].iter_us + w[k].first_us / iters : NAN;
			jobplan_way_free(&w[k]);
		}
		s->chosen[i] = ck;
	}
}

static const char *const colour[JOBPLAN_KINDS] = {"#1f77b4", "#d62728", "#7f7f7f", "#2ca02c"};

static void panel(FILE *out, const struct jobplan_series *s, double x0, double y0, double w,
		  double h, const char *xlabel, bool seconds)
{
	double lo = INFINITY, hi = 0;

	for (int k = 0; k < JOBPLAN_KINDS; k++)
		for (int i = 0; i < NPTS; i++)
			if (isfinite(s->y[k][i]) && s->y[k][i] > 0) {
				lo = fmin(lo, s->y[k][i]);
				hi = fmax(hi, s->y[k][i]);
			}
	if (!isfinite(lo)) {
		lo = 1;
		hi = 10;
	}
	lo = pow(10, floor(log10(lo)));
	hi = pow(10, ceil(log10(hi * 1.0001)));
	double lx0 = log10(s->x[0]), lx1 = log10(s->x[NPTS - 1]);
#define PX(v) (x0 + (log10(v) - lx0) / (lx1 - lx0) * w)
#define PY(v) (y0 + h - (log10(v) - log10(lo)) / (log10(hi) - log10(lo)) * h)
	fprintf(out,
		"<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#000'/>\n",
		x0, y0, w, h);
	for (double v = lo; v <= hi * 1.0001; v *= 10) {
		char b[32];

		fmt_duration(b, sizeof(b), v * 1e-6);
		fprintf(
		    out,
		    "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/><text x='%.1f' "
		    "y='%.1f' font-size='10' text-anchor='end'>%s</text>\n",
		    x0, PY(v), x0 + w, PY(v), x0 - 4, PY(v) + 3, b);
	}
	for (int i = 0; i < NPTS; i += 10) {
		char b[32];

		if (seconds)
			fmt_duration(b, sizeof(b), s->x[i]);
		else
			snprintf(b, sizeof(b), "x%g", s->x[i]);
		fprintf(out,
			"<text x='%.1f' y='%.1f' font-size='10' text-anchor='middle'>%s</text>\n",
			PX(s->x[i]), y0 + h + 14, b);
	}
	fprintf(out, "<text x='%.1f' y='%.1f' font-size='12' text-anchor='middle'>%s</text>\n",
		x0 + w / 2, y0 + h + 30, xlabel);
	for (int k = 0; k < JOBPLAN_KINDS; k++) {
		bool open = false;

		for (int i = 0; i < NPTS; i++) {
			if (!isfinite(s->y[k][i])) {
				if (open)
					fprintf(out,
						"' fill='none' stroke='%s' stroke-width='%s'/>\n",
						colour[k], k == JOBPLAN_CHOSEN ? "3" : "1.5");
				open = false;
				continue;
			}
			fprintf(out, "%s%.1f,%.1f ", open ? "" : "<polyline points='", PX(s->x[i]),
				PY(s->y[k][i]));
			open = true;
		}
		if (open)
			fprintf(out, "' fill='none' stroke='%s' stroke-width='%s'%s/>\n", colour[k],
				k == JOBPLAN_CHOSEN ? "3" : "1.5",
				k == JOBPLAN_CHOSEN ? " stroke-dasharray='6,3'" : "");
	}
	/* the crossovers: where the chosen way changes */
	for (int i = 1; i < NPTS; i++)
		if (s->chosen[i] != s->chosen[i - 1]) {
			double xm = sqrt(s->x[i] * s->x[i - 1]);

			fprintf(
			    out,
			    "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#000' "
			    "stroke-dasharray='2,2'/><text x='%.1f' y='%.1f' font-size='9'>%s to "
			    "%s</text>\n",
			    PX(xm), y0, PX(xm), y0 + h, PX(xm) + 2, y0 + 10 + 10 * (i % 3),
			    jobplan_kind_name((enum jobplan_kind)s->chosen[i - 1]),
			    jobplan_kind_name((enum jobplan_kind)s->chosen[i]));
		}
#undef PX
#undef PY
}

int jobplan_plot(const struct jobplan_result *r, const char *path, struct ofc_error *err)
{
	struct atomic_file af;
	struct jobplan_series *sd = xcalloc(1, sizeof(*sd)), *ss = xcalloc(1, sizeof(*ss));

	jobplan_sweep(r, true, sd);
	jobplan_sweep(r, false, ss);
	if (atomic_open(&af, path, err) < 0) {
		free(sd);
		free(ss);
		return -1;
	}
	FILE *out = af.f;
	fprintf(
	    out,
	    "<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' "
	    "width='900' height='420' font-family='sans-serif'>\n<rect width='900' height='420' "
	    "fill='#fff'/>\n<text x='450' y='20' font-size='14' text-anchor='middle'>%s on %s: "
	    "iteration time</text>\n",
	    r->workload->name ? r->workload->name : "workload", r->fabric->name);
	panel(out, sd, 80, 40, 340, 300, "switching time per change", true);
	panel(out, ss, 530, 40, 340, 300, "message size (every phase's, times)", false);
	for (int k = 0; k < JOBPLAN_KINDS; k++)
		fprintf(
		    out,
		    "<line x1='%d' y1='395' x2='%d' y2='395' stroke='%s' stroke-width='3'/><text "
		    "x='%d' y='399' font-size='11'>%s</text>\n",
		    120 + 180 * k, 145 + 180 * k, colour[k], 150 + 180 * k,
		    jobplan_kind_name((enum jobplan_kind)k));
	fprintf(out, "</svg>\n");
	free(sd);
	free(ss);
	return atomic_commit(&af, err);
}
