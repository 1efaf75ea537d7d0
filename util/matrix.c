/* Square matrices of non-negative numbers from text: a demand matrix for
 * the all-to-all MCF (`ofc schedule --demand-matrix`), a workload's
 * traffic matrix (bytes per iteration). N lines of N numbers, blank lines
 * and lines starting with '#' skipped; every error at FILE:LINE:COL. */
#include "util/util.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* One line's numbers into row (up to n of them; n == 0: count them into
 * *got, any number). The column of what is wrong in *col. */
static int parse_row(const char *name, unsigned lineno, const char *p, const char *end, double *row,
		     uint32_t n, uint32_t max_n, uint32_t *got, struct ofc_error *err)
{
	const char *line = p;

	*got = 0;
	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t' || *p == ','))
			p++;
		if (p >= end || *p == '#')
			break;
		unsigned col = (unsigned)(p - line) + 1;
		char buf[64];
		size_t k = 0;

		while (p < end && !isspace((unsigned char)*p) && *p != ',' && k + 1 < sizeof(buf))
			buf[k++] = *p++;
		buf[k] = 0;
		if (p < end && !isspace((unsigned char)*p) && *p != ',')
			return ofc_error_at(err, OFC_E_INPUT, name, lineno, col,
					    "'%.20s...' is not a number", buf);
		char *e;
		double v = strtod(buf, &e);

		if (e == buf || *e)
			return ofc_error_at(err, OFC_E_INPUT, name, lineno, col,
					    "'%s' is not a number", buf);
		if (!isfinite(v) || v < 0)
			return ofc_error_at(err, OFC_E_INPUT, name, lineno, col,
					    "%s: entries are finite and not negative", buf);
		if ((n && *got >= n) || *got >= max_n)
			return ofc_error_at(err, OFC_E_INPUT, name, lineno, col,
					    "more than %u numbers on this line", n ? n : max_n);
		if (row)
			row[*got] = v;
		(*got)++;
	}
	return 0;
}

int matrix_parse(const char *name, const char *text, size_t len, uint32_t max_n, double **out,
		 uint32_t *n_out, struct ofc_error *err)
{
	const char *p = text, *end = text + len;
	uint32_t n = 0, rows = 0;
	unsigned lineno = 0;
	double *m = NULL;

	*out = NULL;
	*n_out = 0;
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q = p;
		uint32_t got;

		if (!eol)
			eol = end;
		lineno++;
		while (q < eol && isspace((unsigned char)*q))
			q++;
		if (q == eol || *q == '#') {
			p = eol + 1;
			continue;
		}
		if (!n) { /* the first row says N */
			if (parse_row(name, lineno, p, eol, NULL, 0, max_n, &got, err) < 0)
				return -1;
			n = got;
			m = xcalloc((size_t)n * n, sizeof(double));
		}
		if (rows >= n) {
			free(m);
			return ofc_error_at(err, OFC_E_INPUT, name, lineno, 1,
					    "more than %u rows: the matrix is N x N, N being the "
					    "numbers on its first row",
					    n);
		}
		if (parse_row(name, lineno, p, eol, m + (size_t)rows * n, n, max_n, &got, err) <
		    0) {
			free(m);
			return -1;
		}
		if (got != n) {
			free(m);
			return ofc_error_at(err, OFC_E_INPUT, name, lineno, (unsigned)(eol - p) + 1,
					    "%u numbers on this row, %u on the first", got, n);
		}
		rows++;
		p = eol + 1;
	}
	if (!n) {
		return ofc_error_at(err, OFC_E_INPUT, name, lineno ? lineno : 1, 1,
				    "no rows: write N lines of N numbers");
	}
	if (rows < n) {
		free(m);
		return ofc_error_at(err, OFC_E_INPUT, name, lineno + 1, 1,
				    "%u rows of %u: the matrix is N x N, N being the numbers on "
				    "its first row",
				    rows, n);
	}
	*out = m;
	*n_out = n;
	return 0;
}

int matrix_read(const char *path, uint32_t max_n, double **out, uint32_t *n, struct ofc_error *err)
{
	char *text;
	size_t len;
	/* A number takes 2 bytes at least: no file of N <= max_n is larger
	 * than 32 bytes a number. */
	size_t max = (size_t)max_n * max_n * 32 + 4096;
	int rc;

	*out = NULL;
	*n = 0;
	if (read_file(path, max, &text, &len, err) < 0)
		return -1;
	rc = matrix_parse(path, text, len, max_n, out, n, err);
	free(text);
	return rc;
}
