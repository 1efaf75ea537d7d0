/* Demand matrices for the all-to-all MCF: normalised so that
 * the mean pair asks for one shard, and the bound they put on theta on any
 * topology of the degree. */
#include "controller/schedule/internal.h"

#include <math.h>
#include <stdlib.h>

int schedule_demand_normalise(double *m, uint32_t n, double *mean, bool *uniform,
			      struct ofc_error *err)
{
	double sum = 0, first = NAN;
	bool same = true;

	*mean = 0;
	*uniform = false;
	if (n < 2)
		return ofc_error_set(err, OFC_E_INPUT, "a demand matrix of %u node%s: 2 at least",
				     n, n == 1 ? "" : "s");
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t t = 0; t < n; t++) {
			double v = m[(size_t)s * n + t];

			if (s == t)
				continue;
			sum += v;
			if (isnan(first))
				first = v;
			same = same && v == first;
		}
	if (!(sum > 0))
		return ofc_error_set(err, OFC_E_INPUT,
				     "the demand matrix asks for nothing (every pair 0)");
	*mean = sum / ((double)n * (n - 1));
	for (uint32_t s = 0; s < n; s++)
		for (uint32_t t = 0; t < n; t++)
			m[(size_t)s * n + t] = s == t ? 0 : same ? 1 : m[(size_t)s * n + t] / *mean;
	*uniform = same;
	return 0;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x < y) - (x > y);
}

double schedule_demand_bound(const double *m, uint32_t n, uint32_t d, double total, double least)
{
	double *row = xmalloc(((size_t)n + 1) * sizeof(double)), moore = 0, most = 0;
	double *in = xcalloc((size_t)n + 1, sizeof(double));

	for (uint32_t s = 0; s < n; s++) {
		uint32_t k = 0;
		double out = 0;

		for (uint32_t t = 0; t < n; t++)
			if (t != s) {
				row[k++] = m[(size_t)s * n + t];
				out += m[(size_t)s * n + t];
				in[t] += m[(size_t)s * n + t];
			}
		most = fmax(most, out);
		qsort(row, k, sizeof(double), cmp_desc);
		/* at most d^h nodes at distance h from s */
		uint64_t level = d, left = level;
		uint32_t h = 1;
		for (uint32_t i = 0; i < k; i++) {
			if (!left) {
				h++;
				level = level > UINT64_MAX / (d ? d : 1) ? UINT64_MAX : level * d;
				left = level;
			}
			moore += row[i] * h;
			left--;
		}
	}
	for (uint32_t t = 0; t < n; t++)
		most = fmax(most, in[t]);
	free(row);
	free(in);
	/* theta x (sum of demand x distance) <= the links' capacity; theta x
	 * out(s) <= what s's links carry (and in) */
	return fmin(total / moore, least / most);
}
